/** Timestamps in UTC with minutes, the same on the server and in every browser (no hydration drift). */
export function formatTimestamp(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** Timestamps in UTC with seconds, where attempts seconds apart must be told apart. */
export function formatTimestampSeconds(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')} UTC`;
}

/** A duration in milliseconds as a person reads it: 87 ms, 1.2 s. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A count with its noun: 1 delivery, 3 deliveries. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
