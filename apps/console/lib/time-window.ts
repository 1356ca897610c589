/**
 * The created-after and created-before filters are typed in a datetime-local field read as UTC (the console shows
 * every time in UTC) and kept in the URL as typed, e.g. 2025-03-01T09:30.
 */
const LOCAL_MINUTES = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;

/** The API's timestamp for a filter value; anything else is passed on for the API to name the problem. */
export function toApiTimestamp(value: string): string {
  return LOCAL_MINUTES.test(value) ? `${value}:00Z` : value;
}
