import type { EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { ServiceError } from '../common/errors.js';
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

export function priceMicros(items: readonly ChargeItem[]): bigint {
  return items.reduce(
    (sum, item) => sum + BigInt(item.units) * METERS.find((m) => m.id === item.meter)!.unitPriceMicros,
    0n,
  );
}

/**
 * Charges are ledger rows written in the transaction of the work they pay for. The paying key's month-to-date
 * spend is locked, checked against its limit and moved in that same transaction.
 */
export class BillingService {
  constructor(private readonly clock: Clock) {}

  async charge(tx: EntityManager, payer: Actor, items: readonly ChargeItem[]): Promise<bigint> {
    const rows: { has_payment_card: boolean; spending_limit_micros: string | null }[] = await tx.query(
      `SELECT t.has_payment_card, k.spending_limit_micros
         FROM api_keys k JOIN teams t ON t.id = k.team_id WHERE k.id = $1`,
      [payer.keyId],
    );
    const payerRow = rows[0];
    if (!payerRow?.has_payment_card) throw new ServiceError('billing_required', 'the account has no payment card');
    const total = priceMicros(items);
    const now = this.clock.now();
    const month = billingMonth(now);
    await tx.query(
      `INSERT INTO key_monthly_spend (key_id, billing_month, spent_micros) VALUES ($1, $2, 0)
       ON CONFLICT (key_id, billing_month) DO NOTHING`,
      [payer.keyId, month],
    );
    const spent: { spent_micros: string }[] = await tx.query(
      `SELECT spent_micros FROM key_monthly_spend WHERE key_id = $1 AND billing_month = $2 FOR UPDATE`,
      [payer.keyId, month],
    );
    const current = BigInt(spent[0]?.spent_micros ?? '0');
    if (payerRow.spending_limit_micros !== null && current + total > BigInt(payerRow.spending_limit_micros))
      throw new ServiceError('spending_limit', "the charge would exceed the paying key's monthly spending limit");
    for (const item of items) {
      const unitPrice = METERS.find((m) => m.id === item.meter)!.unitPriceMicros;
      await tx.query(
        `INSERT INTO charges (id, team_id, key_id, meter, units, amount_micros, rate_version, resource_id, billing_month, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          newId('charge', this.clock),
          payer.teamId,
          payer.keyId,
          item.meter,
          item.units,
          (BigInt(item.units) * unitPrice).toString(),
          RATE_VERSION,
          item.resourceId,
          month,
          now,
        ],
      );
    }
    await tx.query(
      `UPDATE key_monthly_spend SET spent_micros = spent_micros + $3 WHERE key_id = $1 AND billing_month = $2`,
      [payer.keyId, month, total.toString()],
    );
    return total;
  }

  async monthToDateMicros(tx: EntityManager, keyId: string): Promise<bigint> {
    const rows: { spent_micros: string }[] = await tx.query(
      `SELECT spent_micros FROM key_monthly_spend WHERE key_id = $1 AND billing_month = $2`,
      [keyId, billingMonth(this.clock.now())],
    );
    return BigInt(rows[0]?.spent_micros ?? '0');
  }
}
