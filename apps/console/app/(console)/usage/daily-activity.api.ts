import 'server-only';
import { getAnalytics } from '../dashboard/analytics.api';
import type { AnalyticsRow } from '../dashboard/analytics.types';

/** An analytics window spans at most 30 days; a 31-day month is read in two. */
const MAX_WINDOW_MS = 30 * 24 * 3_600_000;

/**
 * The team's messages accepted and deliveries created per UTC day of a billing month, up to now for the open one:
 * what the two meters charge for. Analytics counts, not the billing record.
 */
export async function getDailyActivity(period: { start: string; end: string }, now: Date): Promise<AnalyticsRow[]> {
  const start = Date.parse(period.start);
  const end = Math.min(Date.parse(period.end), Math.floor(now.getTime() / 60_000) * 60_000);
  const windows: { createdAfter: string; createdBefore: string }[] = [];
  for (let from = start; from < end; from += MAX_WINDOW_MS)
    windows.push({
      createdAfter: new Date(from).toISOString(),
      createdBefore: new Date(Math.min(from + MAX_WINDOW_MS, end)).toISOString(),
    });
  const parts = await Promise.all(
    windows.map((window) => getAnalytics(window, 'day', { tenantId: '', endpointId: '', sourceId: '' })),
  );
  // Windows split on whole days, so no day is in two parts.
  return parts.flatMap((part) => part.rows);
}
