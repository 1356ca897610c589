import { DAY, HOUR } from '../common/clock.js';
import type { AnalyticsBucket } from './analytics.inputs.js';

/** The counters of a bucket (docs/analytics.md says what each counts and when). */
export const ANALYTICS_COUNTERS = [
  'admitted_messages',
  'ingest_bytes',
  'deliveries',
  'attempts',
  'succeeded',
  'failed',
  'expired',
  'canceled',
  'duplicates',
  'rejected_auth',
  'throttled',
] as const;
export type AnalyticsCounter = (typeof ANALYTICS_COUNTERS)[number];

/** The queue gauges: sampled, not summed. */
export interface AnalyticsGauges {
  queue_depth: number;
  oldest_due_age_seconds: number;
}

export type AnalyticsRow = { start: Date } & Record<AnalyticsCounter, number> & AnalyticsGauges;

export interface AnalyticsView extends AnalyticsGauges {
  bucket: AnalyticsBucket;
  createdAfter: Date;
  createdBefore: Date;
  /** Every bucket that overlaps the window, oldest first, zeros where nothing happened. */
  rows: AnalyticsRow[];
}

/** One hour of one scope as stored (analytics_hourly). */
export type HourlyRollup = { hour: Date } & Record<AnalyticsCounter, number> & AnalyticsGauges;

const BUCKET_MS: Record<AnalyticsBucket, number> = { hour: HOUR, day: DAY };

/** The start of the UTC hour or day that contains `at`. */
export function bucketStart(at: Date, bucket: AnalyticsBucket): Date {
  const ms = BUCKET_MS[bucket];
  return new Date(Math.floor(at.getTime() / ms) * ms);
}

/** Where the buckets overlapping [after, before) start and where the last one ends. */
export function bucketRange(after: Date, before: Date, bucket: AnalyticsBucket): { from: Date; to: Date } {
  const from = bucketStart(after, bucket);
  const to = new Date(bucketStart(new Date(before.getTime() - 1), bucket).getTime() + BUCKET_MS[bucket]);
  return { from, to };
}

function emptyRow(start: Date): AnalyticsRow {
  const row = { start, queue_depth: 0, oldest_due_age_seconds: 0 } as AnalyticsRow;
  for (const counter of ANALYTICS_COUNTERS) row[counter] = 0;
  return row;
}

/**
 * The buckets overlapping [after, before), each whole (a bucket the window starts or ends inside still holds its
 * whole hour or day), from the scope's hourly rollups. A day sums its hours; its queue gauges are those of its
 * latest hour with a rollup (the last sample of the day).
 */
export function toBuckets(
  hours: readonly HourlyRollup[],
  after: Date,
  before: Date,
  bucket: AnalyticsBucket,
): AnalyticsRow[] {
  const { from, to } = bucketRange(after, before, bucket);
  const rows: AnalyticsRow[] = [];
  const byStart = new Map<number, { row: AnalyticsRow; gaugeHour: number }>();
  for (let at = from.getTime(); at < to.getTime(); at += BUCKET_MS[bucket]) {
    const row = emptyRow(new Date(at));
    rows.push(row);
    byStart.set(at, { row, gaugeHour: -Infinity });
  }
  for (const hour of hours) {
    const entry = byStart.get(bucketStart(hour.hour, bucket).getTime());
    if (!entry) continue;
    for (const counter of ANALYTICS_COUNTERS) entry.row[counter] += hour[counter];
    if (hour.hour.getTime() > entry.gaugeHour) {
      entry.gaugeHour = hour.hour.getTime();
      entry.row.queue_depth = hour.queue_depth;
      entry.row.oldest_due_age_seconds = hour.oldest_due_age_seconds;
    }
  }
  return rows;
}
