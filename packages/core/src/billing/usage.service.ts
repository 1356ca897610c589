import type { DataSource, EntityManager } from 'typeorm';
import { METERS, RATE_VERSION } from '../catalog/catalog.js';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { invalidField, ServiceError } from '../common/errors.js';
import { billingMonth } from './billing.service.js';
import type { UsageQuery } from './usage.inputs.js';
import type { DailySpend, KeyUsage, MeterUsageLine, UsageReport } from './usage.view.js';

/** How long a close waits for its lock (another close of the month) or for a charge still writing into the month. */
export const CLOSE_LOCK_TIMEOUT_MS = 2000;
/** Retry-After of a close that could not take its locks in time. */
const CLOSE_RETRY_AFTER_SECONDS = 2;
/** Most team months one run of the scheduled close takes on. */
const CLOSE_BATCH = 500;

/** The advisory lock a close of one team's month holds (tests take it to make a close wait). */
export function closeLockName(teamId: string, month: string): string {
  return `billing-close:${teamId}:${month}`;
}

/** A closed month's statement: when it closed, the rates in force then and its frozen total. */
export interface MonthStatement {
  teamId: string;
  /** 'YYYY-MM-01'. */
  month: string;
  rateVersion: string;
  totalMicros: bigint;
  closedAt: Date;
}

export interface CloseRunReport {
  closed: number;
  /** Months whose close could not take its locks in time; the next run takes them again. */
  deferred: number;
}

interface UsageRow {
  key_id: string;
  label: string | null;
  limit_micros: string | null;
  meter: string | null;
  rate_version: string | null;
  units: string | null;
  amount_micros: string | null;
}

interface StatementRow {
  team_id: string;
  month: string;
  rate_version: string;
  total_micros: string;
  closed_at: Date;
}

/** 00:00 UTC of the month's first day and of the next month's first day. */
function monthPeriod(month: string): { start: Date; end: Date } {
  const [year, monthNumber] = month.split('-').map(Number) as [number, number];
  return { start: new Date(Date.UTC(year, monthNumber - 1, 1)), end: new Date(Date.UTC(year, monthNumber, 1)) };
}

function isLockTimeout(error: unknown): boolean {
  const code =
    (error as { code?: unknown })?.code ?? (error as { driverError?: { code?: unknown } })?.driverError?.code;
  return code === '55P03';
}

const byMeterOrder = (a: MeterUsageLine, b: MeterUsageLine): number => {
  const rank = (meter: string) => {
    const index = METERS.findIndex((m) => m.id === meter);
    return index === -1 ? METERS.length : index;
  };
  return rank(a.meter) - rank(b.meter) || a.meter.localeCompare(b.meter) || a.rateVersion.localeCompare(b.rateVersion);
};

/**
 * Every meter of the month's rates (zero when unused) plus any line of another rate version, summed by meter and
 * rate version.
 */
function meterLines(lines: readonly MeterUsageLine[], rateVersion: string): MeterUsageLine[] {
  const sums = new Map<string, MeterUsageLine>();
  for (const meter of METERS)
    sums.set(`${meter.id}\u0000${rateVersion}`, { meter: meter.id, rateVersion, units: 0n, amountMicros: 0n });
  for (const line of lines) {
    const key = `${line.meter}\u0000${line.rateVersion}`;
    const seen = sums.get(key);
    sums.set(
      key,
      seen
        ? { ...seen, units: seen.units + line.units, amountMicros: seen.amountMicros + line.amountMicros }
        : { ...line },
    );
  }
  return [...sums.values()].sort(byMeterOrder);
}

/**
 * Usage by meter per billing month (GET /meta/usage) and the closing of billing months (docs/usage.md).
 *
 * Reads come from key_monthly_meter_usage, the rollup the charge statement moves together with the ledger, so a
 * report costs a few rows per key whatever the month's traffic. A month is closed once it has ended: by the
 * scheduled job (closeEndedMonths) or by the first request that needs it closed (a report of a past month). Closing
 * flags every spend row of the team's month, so no charge can land in it afterwards, and writes the statement.
 */
export class UsageService {
  constructor(private readonly deps: { db: DataSource; clock: Clock }) {}

  /** The billing month (YYYY-MM-01) a query asks for, the current one when absent; a later one is refused. */
  private reportMonth(query: UsageQuery): { month: string; current: string } {
    const current = billingMonth(this.deps.clock.now());
    const month = query.month ? `${query.month}-01` : current;
    if (month > current) throw invalidField('month', 'month must not be after the current billing month');
    return { month, current };
  }

  async getUsage(ctx: CallContext, query: UsageQuery): Promise<UsageReport> {
    const { month, current } = this.reportMonth(query);
    const teamId = ctx.actor.teamId;
    if (month === current) return this.openMonthReport(teamId, month);
    const statement = await this.closeMonth(teamId, month);
    return this.closedMonthReport(statement);
  }

  /**
   * The team's charges per UTC day of a billing month (YYYY-MM, the current month when absent): every day from the
   * month's first to its last, or to today for the current month, 0 where nothing was charged. It reads the month's
   * ledger rows through the team's keys (charges_key_month_idx): the rollup the report reads has no days. The days
   * add up to the report's total, since both count the same charges.
   */
  async getDailySpend(ctx: CallContext, query: UsageQuery): Promise<DailySpend[]> {
    const { month } = this.reportMonth(query);
    const rows: { day: string; micros: string }[] = await this.deps.db.query(
      `SELECT to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(c.amount_micros)::text AS micros
         FROM api_keys k JOIN charges c ON c.key_id = k.id AND c.billing_month = $2
        WHERE k.team_id = $1
        GROUP BY 1`,
      [ctx.actor.teamId, month],
    );
    const charged = new Map(rows.map((row) => [row.day, BigInt(row.micros)]));
    const { start, end } = monthPeriod(month);
    const last = Math.min(end.getTime(), this.deps.clock.now().getTime() + 1);
    const days: DailySpend[] = [];
    for (let time = start.getTime(); time < last; time += 86_400_000) {
      const day = new Date(time).toISOString().slice(0, 10);
      days.push({ day, totalMicros: charged.get(day) ?? 0n });
    }
    return days;
  }

  /**
   * Closes one team's ended month, or returns its statement when it is closed already. 503 temporarily_unavailable
   * (Retry-After) when it cannot take its lock, or wait out a charge still writing into the month, within
   * CLOSE_LOCK_TIMEOUT_MS.
   */
  async closeMonth(teamId: string, month: string): Promise<MonthStatement> {
    if (month >= billingMonth(this.deps.clock.now())) throw new Error(`billing month ${month} has not ended`);
    const closed = await this.findStatement(this.deps.db.manager, teamId, month);
    if (closed) return closed;
    try {
      return await this.deps.db.transaction((tx) => this.closeIn(tx, teamId, month));
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      throw new ServiceError('temporarily_unavailable', 'the billing month could not be closed now; retry', {
        retryAfter: CLOSE_RETRY_AFTER_SECONDS,
      });
    }
  }

  /** The scheduled close: every team's ended month that has spend rows and is not closed yet. */
  async closeEndedMonths(): Promise<CloseRunReport> {
    const pending: { team_id: string; month: string }[] = await this.deps.db.query(
      `SELECT DISTINCT k.team_id, s.billing_month::text AS month
         FROM key_monthly_spend s JOIN api_keys k ON k.id = s.key_id
        WHERE NOT s.closed AND s.billing_month < $1
        ORDER BY month, k.team_id
        LIMIT $2`,
      [billingMonth(this.deps.clock.now()), CLOSE_BATCH],
    );
    const report: CloseRunReport = { closed: 0, deferred: 0 };
    for (const { team_id: teamId, month } of pending) {
      try {
        await this.closeMonth(teamId, month);
        report.closed += 1;
      } catch (error) {
        if (!(error instanceof ServiceError && error.code === 'temporarily_unavailable')) throw error;
        report.deferred += 1;
      }
    }
    return report;
  }

  private async closeIn(tx: EntityManager, teamId: string, month: string): Promise<MonthStatement> {
    await tx.query(`SET LOCAL lock_timeout = ${CLOSE_LOCK_TIMEOUT_MS}`);
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [closeLockName(teamId, month)]);
    const done = await this.findStatement(tx, teamId, month);
    if (done) return done;
    const { start, end } = monthPeriod(month);
    // A spend row for every key that could still be charging into the month (a key revoked a day before it began
    // cannot), so the flag below reaches even a key whose first charge of the month is in flight: its insert and
    // this one meet on the primary key and the later one waits.
    await tx.query(
      `INSERT INTO key_monthly_spend (key_id, billing_month, spent_micros)
       SELECT k.id, $2, 0 FROM api_keys k
        WHERE k.team_id = $1 AND k.kind = 'secret' AND k.created_at < $4
          AND (k.revoked_at IS NULL OR k.revoked_at >= $3::timestamptz - interval '1 day')
       ON CONFLICT (key_id, billing_month) DO NOTHING`,
      [teamId, month, start, end],
    );
    // Waits for charges holding a row of the month (they commit first and are counted); a charge reaching a row
    // after this finds it closed.
    await tx.query(
      `UPDATE key_monthly_spend s SET closed = true, limit_at_close_micros = k.spending_limit_micros
         FROM api_keys k
        WHERE k.id = s.key_id AND k.team_id = $1 AND s.billing_month = $2`,
      [teamId, month],
    );
    // A statement of its own: its snapshot includes every charge the update above waited for.
    const rows: StatementRow[] = await tx.query(
      `INSERT INTO billing_month_statements (team_id, billing_month, rate_version, total_micros, closed_at)
       SELECT $1, $2, $3, coalesce(sum(u.amount_micros), 0), $4
         FROM api_keys k JOIN key_monthly_meter_usage u ON u.key_id = k.id AND u.billing_month = $2
        WHERE k.team_id = $1
       RETURNING team_id, billing_month::text AS month, rate_version, total_micros::text, closed_at`,
      [teamId, month, RATE_VERSION, this.deps.clock.now()],
    );
    return toStatement(rows[0]!);
  }

  private async findStatement(db: EntityManager, teamId: string, month: string): Promise<MonthStatement | null> {
    const rows: StatementRow[] = await db.query(
      `SELECT team_id, billing_month::text AS month, rate_version, total_micros::text, closed_at
         FROM billing_month_statements WHERE team_id = $1 AND billing_month = $2`,
      [teamId, month],
    );
    return rows[0] ? toStatement(rows[0]) : null;
  }

  /**
   * One statement, so one snapshot: each key's lines and its spend come from the same commits. Keys listed: every
   * secret key not revoked, and every key charged in the month.
   */
  private async openMonthReport(teamId: string, month: string): Promise<UsageReport> {
    const rows: UsageRow[] = await this.deps.db.query(
      `SELECT k.id AS key_id, k.label, k.spending_limit_micros::text AS limit_micros, u.meter, u.rate_version,
              u.units::text, u.amount_micros::text
         FROM api_keys k
         LEFT JOIN key_monthly_meter_usage u ON u.key_id = k.id AND u.billing_month = $2
        WHERE k.team_id = $1 AND k.kind = 'secret' AND (k.revoked_at IS NULL OR k.revoked_at > $3 OR u.key_id IS NOT NULL)
        ORDER BY k.id`,
      [teamId, month, this.deps.clock.now()],
    );
    return report(month, { status: 'open', closedAt: null, rateVersion: RATE_VERSION }, rows);
  }

  /**
   * A closed month's lines can no longer move; each key's limit is the one it had when the month closed. Keys
   * listed: those charged in the month and those not revoked by its end.
   */
  private async closedMonthReport(statement: MonthStatement): Promise<UsageReport> {
    const { end } = monthPeriod(statement.month);
    const rows: UsageRow[] = await this.deps.db.query(
      `SELECT k.id AS key_id, k.label, s.limit_at_close_micros::text AS limit_micros, u.meter, u.rate_version,
              u.units::text, u.amount_micros::text
         FROM api_keys k
         JOIN key_monthly_spend s ON s.key_id = k.id AND s.billing_month = $2
         LEFT JOIN key_monthly_meter_usage u ON u.key_id = k.id AND u.billing_month = $2
        WHERE k.team_id = $1 AND s.closed
          AND (s.spent_micros > 0 OR k.revoked_at IS NULL OR k.revoked_at >= $3)
        ORDER BY k.id`,
      [statement.teamId, statement.month, end],
    );
    const usage = report(
      statement.month,
      { status: 'closed', closedAt: statement.closedAt, rateVersion: statement.rateVersion },
      rows,
    );
    // The statement froze the total when the month closed; the lines cannot have moved since.
    if (usage.totalMicros !== statement.totalMicros)
      throw new Error(`statement of ${statement.teamId} ${statement.month} differs from its lines`);
    return usage;
  }
}

function toStatement(row: StatementRow): MonthStatement {
  return {
    teamId: row.team_id,
    month: row.month,
    rateVersion: row.rate_version,
    totalMicros: BigInt(row.total_micros),
    closedAt: row.closed_at,
  };
}

function report(
  month: string,
  state: Pick<UsageReport, 'status' | 'closedAt' | 'rateVersion'>,
  rows: readonly UsageRow[],
): UsageReport {
  const byKey = new Map<string, { label: string | null; limit: bigint | null; lines: MeterUsageLine[] }>();
  for (const row of rows) {
    const entry = byKey.get(row.key_id) ?? {
      label: row.label,
      limit: row.limit_micros === null ? null : BigInt(row.limit_micros),
      lines: [],
    };
    if (row.meter !== null)
      entry.lines.push({
        meter: row.meter,
        rateVersion: row.rate_version!,
        units: BigInt(row.units!),
        amountMicros: BigInt(row.amount_micros!),
      });
    byKey.set(row.key_id, entry);
  }
  const keys: KeyUsage[] = [...byKey.entries()].map(([keyId, { label, limit, lines }]) => {
    const spent = lines.reduce((sum, line) => sum + line.amountMicros, 0n);
    return {
      keyId,
      label,
      spendingLimitMicros: limit,
      spentMicros: spent,
      remainingMicros: limit === null ? null : limit > spent ? limit - spent : 0n,
      meters: meterLines(lines, state.rateVersion),
    };
  });
  const meters = meterLines(
    keys.flatMap((key) => key.meters),
    state.rateVersion,
  );
  const { start, end } = monthPeriod(month);
  return {
    month: month.slice(0, 7),
    ...state,
    periodStart: start,
    periodEnd: end,
    currency: 'USD',
    totalMicros: meters.reduce((sum, line) => sum + line.amountMicros, 0n),
    meters,
    keys,
  };
}
