import type { EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { ServiceError } from '../common/errors.js';
import type { Bind } from '../common/transaction.js';
import { newId } from '../common/ids.js';
import { METERS, RATE_VERSION, type Meter } from '../catalog/catalog.js';

export interface ChargeItem {
  meter: Meter['id'];
  units: number;
  resourceId: string;
}

/** The first day of the UTC month: spending limits reset at 00:00 UTC of the next billing month. */
export function billingMonth(date: Date): string {
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

export function unitsFor(bytes: number, meter: Meter['id']): number {
  const unitBytes = METERS.find((m) => m.id === meter)!.unitBytes;
  return Math.max(1, Math.ceil(bytes / unitBytes));
}

/** The price of one unit of a meter, in micro-USD. */
export function unitPrice(meter: Meter['id']): bigint {
  return METERS.find((m) => m.id === meter)!.unitPriceMicros;
}

export function priceMicros(items: readonly ChargeItem[]): bigint {
  return items.reduce(
    (sum, item) => sum + BigInt(item.units) * METERS.find((m) => m.id === item.meter)!.unitPriceMicros,
    0n,
  );
}

/** Items of one resource merged per meter: one ledger row per message and meter. */
function mergeByMeter(items: readonly ChargeItem[]): ChargeItem[] {
  const merged = new Map<string, ChargeItem>();
  for (const item of items) {
    const key = `${item.meter}\u0000${item.resourceId}`;
    const seen = merged.get(key);
    merged.set(key, seen ? { ...seen, units: seen.units + item.units } : { ...item });
  }
  return [...merged.values()];
}

interface ChargeOutcome {
  card: boolean | null;
  charged: number;
}

/** What one paying key is charged in a batch: its items (one resource each, merged per meter). */
export interface PayerCharges {
  payer: Actor;
  items: readonly ChargeItem[];
}

/**
 * Charges are ledger rows written in the transaction of the work they pay for. One statement writes the rows
 * (one per resource and meter), moves the paying key's month-to-date spend with a conditional upsert that refuses
 * to pass its limit, and moves the key's usage rollup per meter (key_monthly_meter_usage, what GET /meta/usage
 * reads). Call it last in the work's transaction: the spend row stays locked only from this statement to the
 * commit, not across the whole admission.
 *
 * A month being closed (UsageService.closeMonth) flags every spend row of the month, so a charge that read the
 * clock just before 00:00 UTC and reached its row after the close is refused by the same upsert; it is then made
 * in the month the clock is in now, or answered 503 temporarily_unavailable when this process's clock is still in
 * the closed month (docs/usage.md, Closing a billing month).
 */
export class BillingService {
  constructor(private readonly clock: Clock) {}

  async charge(tx: EntityManager, payer: Actor, items: readonly ChargeItem[]): Promise<bigint> {
    const rows = mergeByMeter(items);
    const total = priceMicros(rows);
    const at = this.clock.now();
    if (await this.chargeAt(tx, payer, rows, total, at)) return total;
    // Refused by the limit, or the month closed under this charge: only a closed month moves it to the next one.
    if (!(await this.isClosed(tx, payer.keyId, billingMonth(at))))
      throw new ServiceError('spending_limit', "the charge would exceed the paying key's monthly spending limit");
    const now = this.clock.now();
    if (billingMonth(now) === billingMonth(at))
      throw new ServiceError('temporarily_unavailable', 'the billing month was closed while charging; retry', {
        retryAfter: 1,
      });
    if (await this.chargeAt(tx, payer, rows, total, now)) return total;
    throw new ServiceError('spending_limit', "the charge would exceed the paying key's monthly spending limit");
  }

  /**
   * One statement: ledger rows, spend and usage rollup in the billing month of `at`, or nothing. False when refused
   * by the limit or a close.
   */
  private async chargeAt(
    tx: EntityManager,
    payer: Actor,
    rows: readonly ChargeItem[],
    total: bigint,
    at: Date,
  ): Promise<boolean> {
    const result: ChargeOutcome[] = await tx.query(
      `WITH payer AS (
         SELECT t.has_payment_card AS card, k.spending_limit_micros AS lim
           FROM api_keys k JOIN teams t ON t.id = k.team_id WHERE k.id = $1),
       spend AS (
         INSERT INTO key_monthly_spend AS s (key_id, billing_month, spent_micros)
         SELECT $1, $2, $3::bigint FROM payer WHERE payer.card AND (payer.lim IS NULL OR $3::bigint <= payer.lim)
         ON CONFLICT (key_id, billing_month) DO UPDATE SET spent_micros = s.spent_micros + EXCLUDED.spent_micros
          WHERE NOT s.closed
            AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id
                              AND k.spending_limit_micros < s.spent_micros + EXCLUDED.spent_micros)
         RETURNING 1),
       items AS (
         SELECT * FROM unnest($7::text[], $8::text[], $9::int[], $10::bigint[], $11::text[])
                    AS c(id, meter, units, amount, resource_id)
          WHERE EXISTS (SELECT 1 FROM spend)),
       ledger AS (
         INSERT INTO charges (id, team_id, key_id, meter, units, amount_micros, rate_version, resource_id,
                              billing_month, created_at)
         SELECT c.id, $4, $1, c.meter, c.units, c.amount, $5, c.resource_id, $2, $6 FROM items c
         RETURNING 1),
       usage AS (
         INSERT INTO key_monthly_meter_usage AS u (key_id, billing_month, meter, rate_version, units, amount_micros,
                                                   charge_rows)
         SELECT $1, $2, c.meter, $5, sum(c.units), sum(c.amount), count(*) FROM items c GROUP BY c.meter
         ON CONFLICT (key_id, billing_month, meter, rate_version) DO UPDATE
           SET units = u.units + EXCLUDED.units, amount_micros = u.amount_micros + EXCLUDED.amount_micros,
               charge_rows = u.charge_rows + EXCLUDED.charge_rows
         RETURNING 1)
       SELECT (SELECT card FROM payer) AS card, (SELECT count(*) FROM spend)::int AS charged,
              (SELECT count(*) FROM ledger)::int AS written, (SELECT count(*) FROM usage)::int AS rolled`,
      [
        payer.keyId,
        billingMonth(at),
        total.toString(),
        payer.teamId,
        RATE_VERSION,
        at,
        rows.map(() => newId('charge', this.clock)),
        rows.map((item) => item.meter),
        rows.map((item) => item.units),
        rows.map((item) => (BigInt(item.units) * unitPrice(item.meter)).toString()),
        rows.map((item) => item.resourceId),
      ],
    );
    const outcome = result[0];
    if (!outcome?.card) throw new ServiceError('billing_required', 'the account has no payment card');
    return outcome.charged > 0;
  }

  /**
   * The charges of several keys as CTEs of the caller's statement (an admission batch), with the same rules as
   * `charge`: per key, one conditional upsert of its month-to-date spend that refuses to pass its limit or a closed
   * month, and the ledger and usage rows only for the keys it moved. The CTE `charged` lists those keys (key_id);
   * the caller charges any other key with `charge`, which applies the limit or moves the charge to the month the
   * clock is in now. The caller checked each key's card. Keys are taken in ID order.
   */
  batchChargeSql(charges: readonly PayerCharges[], at: Date, bind: Bind): string {
    const byKey = new Map<string, { payer: Actor; items: ChargeItem[] }>();
    for (const { payer, items } of charges) {
      const seen = byKey.get(payer.keyId) ?? { payer, items: [] };
      seen.items.push(...items);
      byKey.set(payer.keyId, seen);
    }
    const payers = [...byKey.values()].sort((a, b) => (a.payer.keyId < b.payer.keyId ? -1 : 1));
    const rows = payers.flatMap(({ payer, items }) => mergeByMeter(items).map((item) => ({ payer, item })));
    const month = `${bind(billingMonth(at))}::date`;
    const rateVersion = `${bind(RATE_VERSION)}::text`;
    return `payer_spend AS (
         SELECT x.key_id, x.total, k.spending_limit_micros AS lim, t.has_payment_card AS card
           FROM unnest(${bind(payers.map((c) => c.payer.keyId))}::text[],
                       ${bind(payers.map((c) => priceMicros(c.items).toString()))}::bigint[]) WITH ORDINALITY
                AS x(key_id, total, i)
           JOIN api_keys k ON k.id = x.key_id
           JOIN teams t ON t.id = k.team_id
          ORDER BY x.i),
       charged AS (
         INSERT INTO key_monthly_spend AS s (key_id, billing_month, spent_micros)
         SELECT p.key_id, ${month}, p.total FROM payer_spend p
          WHERE p.card AND (p.lim IS NULL OR p.total <= p.lim)
          ORDER BY p.key_id
         ON CONFLICT (key_id, billing_month) DO UPDATE SET spent_micros = s.spent_micros + EXCLUDED.spent_micros
          WHERE NOT s.closed
            AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id
                              AND k.spending_limit_micros < s.spent_micros + EXCLUDED.spent_micros)
         RETURNING s.key_id),
       charge_items AS (
         SELECT c.* FROM unnest(${bind(rows.map(() => newId('charge', this.clock)))}::text[],
                                ${bind(rows.map((r) => r.payer.keyId))}::text[],
                                ${bind(rows.map((r) => r.payer.teamId))}::text[],
                                ${bind(rows.map((r) => r.item.meter))}::text[],
                                ${bind(rows.map((r) => r.item.units))}::int[],
                                ${bind(rows.map((r) => (BigInt(r.item.units) * unitPrice(r.item.meter)).toString()))}::bigint[],
                                ${bind(rows.map((r) => r.item.resourceId))}::text[])
                         AS c(id, key_id, team_id, meter, units, amount, resource_id)
          WHERE c.key_id IN (SELECT key_id FROM charged)),
       ledger AS (
         INSERT INTO charges (id, team_id, key_id, meter, units, amount_micros, rate_version, resource_id,
                              billing_month, created_at)
         SELECT c.id, c.team_id, c.key_id, c.meter, c.units, c.amount, ${rateVersion}, c.resource_id, ${month},
                ${bind(at)}::timestamptz
           FROM charge_items c),
       usage AS (
         INSERT INTO key_monthly_meter_usage AS u (key_id, billing_month, meter, rate_version, units, amount_micros,
                                                   charge_rows)
         SELECT c.key_id, ${month}, c.meter, ${rateVersion}, sum(c.units), sum(c.amount), count(*)
           FROM charge_items c GROUP BY c.key_id, c.meter ORDER BY c.key_id, c.meter
         ON CONFLICT (key_id, billing_month, meter, rate_version) DO UPDATE
           SET units = u.units + EXCLUDED.units, amount_micros = u.amount_micros + EXCLUDED.amount_micros,
               charge_rows = u.charge_rows + EXCLUDED.charge_rows)`;
  }

  /** Read in a statement of its own, so it sees a close that committed while the charge waited for the row. */
  private async isClosed(tx: EntityManager, keyId: string, month: string): Promise<boolean> {
    const rows: { closed: boolean }[] = await tx.query(
      `SELECT closed FROM key_monthly_spend WHERE key_id = $1 AND billing_month = $2`,
      [keyId, month],
    );
    return rows[0]?.closed === true;
  }
}
