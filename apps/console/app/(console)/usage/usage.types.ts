/** One meter's units and money at one rate version. */
export interface MeterUsage {
  /** webhooks.ingest_64k or webhooks.delivery_16k */
  meter: string;
  rateVersion: string;
  unit: string;
  units: number;
  totalUsd: string;
}

/** One paying key's billing month. */
export interface KeyUsage {
  keyId: string;
  /** The operator's label for the key (admin CLI); null: none. */
  label: string | null;
  /** The monthly spending limit (as it was at the close, for a closed month); null: none. */
  spendingLimitUsd: string | null;
  spentUsd: string;
  /** What is left of the limit (never below 0); null without a limit. */
  remainingUsd: string | null;
  meters: MeterUsage[];
}

/** The team's usage in one billing month (UTC). */
export interface Usage {
  /** YYYY-MM */
  month: string;
  /** open (the current month) or closed (ended, frozen) */
  status: string;
  closedAt: string | null;
  period: { start: string; end: string };
  currency: string;
  rateVersion: string;
  totalUsd: string;
  meters: MeterUsage[];
  keys: KeyUsage[];
}

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
