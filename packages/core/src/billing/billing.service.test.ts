import { describe, expect, it } from 'vitest';
import { ManualClock } from '../common/clock.js';
import { useTestCore } from '../testing/test-core.js';
import { billingMonth, priceMicros, unitsFor } from './billing.service.js';

const clock = new ManualClock('2026-11-30T23:59:00Z');
const core = useTestCore(clock);

/** What the key has spent in the clock's billing month, as the spending-limit check reads it. */
async function spentThisMonth(keyId: string): Promise<bigint> {
  const rows: { spent_micros: string }[] = await core.services.db.query(
    `SELECT spent_micros FROM key_monthly_spend WHERE key_id = $1 AND billing_month = $2`,
    [keyId, billingMonth(clock.now())],
  );
  return BigInt(rows[0]?.spent_micros ?? '0');
}

describe('pricing', () => {
  it('charges per started unit, at least one', () => {
    expect(unitsFor(0, 'webhooks.ingest_64k')).toBe(1);
    expect(unitsFor(65_536, 'webhooks.ingest_64k')).toBe(1);
    expect(unitsFor(65_537, 'webhooks.ingest_64k')).toBe(2);
    expect(unitsFor(1024, 'webhooks.delivery_16k')).toBe(1);
    // The spec's example: a 1 KiB message to 2 endpoints is 1 ingest unit plus 2 delivery units.
    expect(
      priceMicros([
        { meter: 'webhooks.ingest_64k', units: 1, resourceId: 'm' },
        { meter: 'webhooks.delivery_16k', units: 2, resourceId: 'm' },
      ]),
    ).toBe(110n);
  });
});

describe('charges against a key', () => {
  it('refuse with billing_required without a payment card and with spending_limit over the monthly limit; the month resets', async () => {
    const team = await core.services.teams.createTeam('billing');
    const key = await core.services.teams.createKey(team.id, { spendingLimitMicros: 100n });
    const payer = { teamId: team.id, keyId: key.keyId };
    const item = { meter: 'webhooks.delivery_16k' as const, units: 1, resourceId: 'wdm_x' };
    await core.services.teams.setPaymentCard(team.id, false);
    await expect(
      core.services.db.transaction((tx) => core.services.billing.charge(tx, payer, [item])),
    ).rejects.toMatchObject({
      code: 'billing_required',
    });
    await core.services.teams.setPaymentCard(team.id, true);
    await core.services.db.transaction((tx) => core.services.billing.charge(tx, payer, [item, item]));
    await expect(
      core.services.db.transaction((tx) => core.services.billing.charge(tx, payer, [item])),
    ).rejects.toMatchObject({
      code: 'spending_limit',
    });
    expect(await spentThisMonth(key.keyId)).toBe(100n);
    clock.advance(60_000);
    await core.services.db.transaction((tx) => core.services.billing.charge(tx, payer, [item]));
    expect(await spentThisMonth(key.keyId)).toBe(50n);
  });

  it('never lets concurrent charges pass the limit together', async () => {
    const team = await core.services.teams.createTeam('race');
    const key = await core.services.teams.createKey(team.id, { spendingLimitMicros: 500n });
    const payer = { teamId: team.id, keyId: key.keyId };
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        core.services.db.transaction((tx) =>
          core.services.billing.charge(tx, payer, [{ meter: 'webhooks.delivery_16k', units: 1, resourceId: 'm' }]),
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect(await spentThisMonth(key.keyId)).toBe(500n);
  });
});
