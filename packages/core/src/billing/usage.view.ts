import type { Meter } from '../catalog/catalog.js';

/** Units and money of one meter at one rate version; money in micro-USD. */
export interface MeterUsageLine {
  meter: Meter['id'] | string;
  rateVersion: string;
  units: bigint;
  amountMicros: bigint;
}

/** One paying key's month: its limit (frozen when the month closed), spend and what is left of the limit. */
export interface KeyUsage {
  keyId: string;
  /** The operator's label for the key (admin CLI); null when it has none. */
  label: string | null;
  spendingLimitMicros: bigint | null;
  spentMicros: bigint;
  /** The limit minus the spend, never below 0; null without a limit. */
  remainingMicros: bigint | null;
  meters: MeterUsageLine[];
}

/**
 * A team's usage of one billing month (GET /meta/usage): the sum of its charges ledger, per meter and per paying
 * key. Totals are exact: every amount is the sum of ledger rows, in micro-USD.
 */
export interface UsageReport {
  /** `YYYY-MM`. */
  month: string;
  /** open: the current month, still taking charges; closed: frozen (docs/usage.md, Closing a billing month). */
  status: 'open' | 'closed';
  closedAt: Date | null;
  periodStart: Date;
  /** 00:00 UTC of the next month (exclusive): when spending limits reset. */
  periodEnd: Date;
  currency: 'USD';
  /** The rates in force for the month: now while it is open, at its close once closed. */
  rateVersion: string;
  totalMicros: bigint;
  meters: MeterUsageLine[];
  keys: KeyUsage[];
}

/** One UTC day of a billing month: what the team's keys were charged that day, in micro-USD. */
export interface DailySpend {
  /** YYYY-MM-DD (UTC) */
  day: string;
  totalMicros: bigint;
}
