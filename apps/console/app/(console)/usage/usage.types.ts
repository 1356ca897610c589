import type { MeterUsageFieldsFragment, UsageQuery } from '@/gql/graphql';

/** One meter's units and money at one rate version. */
export type MeterUsage = MeterUsageFieldsFragment;

/** One paying key's billing month. */
export type KeyUsage = UsageQuery['usage']['keys'][number];

/** What the team was charged on one UTC day of the month. */
export type DailySpend = UsageQuery['usage']['days'][number];

/** The day of the month that was charged the most, or null when nothing was. */
export function busiestDay(days: readonly DailySpend[]): DailySpend | null {
  return days.reduce<DailySpend | null>(
    (best, day) => (Number(day.totalUsd) > Number(best?.totalUsd ?? 0) ? day : best),
    null,
  );
}

/** The team's usage in one billing month (UTC). */
export type Usage = UsageQuery['usage'];

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export function isBillingMonth(value: string): boolean {
  return MONTH.test(value);
}

/** YYYY-MM of a time, in UTC like the billing months. */
export function billingMonth(time: Date): string {
  return time.toISOString().slice(0, 7);
}

/** The billing month `count` months before `month` (YYYY-MM). */
export function monthsBefore(month: string, count: number): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return billingMonth(new Date(Date.UTC(year, number - 1 - count, 1)));
}

/** How the meters read for a person: what one unit is. */
export const METER_LABELS: Record<string, string> = {
  'webhooks.ingest_64k': 'Ingest (per 64 KiB accepted)',
  'webhooks.delivery_16k': 'Delivery (per 16 KiB delivered)',
};

/** A share of a limit as a bar width, full at or past the limit. */
export function spentShare(spentUsd: string, limitUsd: string): number {
  const limit = Number(limitUsd);
  if (limit <= 0) return 100;
  return Math.min(100, (Number(spentUsd) / limit) * 100);
}
