import type { AnalyticsBucket as GeneratedAnalyticsBucket, AnalyticsQuery } from '@/gql/graphql';

/** One hour or day of one scope; counts by transition time. */
export type AnalyticsRow = AnalyticsQuery['analytics']['rows'][number];

export type Analytics = AnalyticsQuery['analytics'];

export type AnalyticsBucket = GeneratedAnalyticsBucket;

/** The time windows the dashboard offers, ending now. */
export const WINDOWS = [
  { value: '24h', label: 'Last 24 hours', hours: 24, bucket: 'hour' },
  { value: '7d', label: 'Last 7 days', hours: 7 * 24, bucket: 'day' },
  { value: '30d', label: 'Last 30 days', hours: 30 * 24, bucket: 'day' },
] as const;

export type DashboardWindow = (typeof WINDOWS)[number]['value'];

/** The dashboard's choices as the URL holds them; empty scope IDs mean the whole team. */
export interface DashboardSearch {
  window: DashboardWindow;
  bucket: AnalyticsBucket;
  tenant: string;
  endpoint: string;
  source: string;
}

export function parseWindow(value: string): DashboardWindow {
  return WINDOWS.find((window) => window.value === value)?.value ?? '24h';
}

/** The bucket picked, or the window's natural one (hours for a day, days beyond). */
export function parseBucket(value: string, window: DashboardWindow): AnalyticsBucket {
  if (value === 'hour' || value === 'day') return value;
  return WINDOWS.find((choice) => choice.value === window)!.bucket;
}

/** The window's bounds ending at `now` (to the minute, so a reload within it asks the same). */
export function windowBounds(window: DashboardWindow, now: Date): { createdAfter: string; createdBefore: string } {
  const end = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const hours = WINDOWS.find((choice) => choice.value === window)!.hours;
  return {
    createdAfter: new Date(end.getTime() - hours * 3_600_000).toISOString(),
    createdBefore: end.toISOString(),
  };
}

export interface AnalyticsTotals {
  messages: number;
  deliveries: number;
  succeeded: number;
  /** Failed and expired: the dead letters. */
  failures: number;
  /** Succeeded of the deliveries that finished succeeded, failed or expired; null when none did. */
  successRate: number | null;
}

/** A share in percent with one decimal, or null without a whole. */
export function successRate(succeeded: number, failures: number): number | null {
  const finished = succeeded + failures;
  return finished === 0 ? null : Math.round((succeeded / finished) * 1000) / 10;
}

export function totals(rows: readonly AnalyticsRow[]): AnalyticsTotals {
  const sum = (pick: (row: AnalyticsRow) => number) => rows.reduce((total, row) => total + pick(row), 0);
  const succeeded = sum((row) => row.succeeded);
  const failures = sum((row) => row.failed + row.expired);
  return {
    messages: sum((row) => row.admittedMessages),
    deliveries: sum((row) => row.deliveries),
    succeeded,
    failures,
    successRate: successRate(succeeded, failures),
  };
}
