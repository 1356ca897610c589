import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { ManualClock } from '../common/clock.js';
import { openCore } from '../boot.js';
import { testCoreOptions } from '../testing/core-options.js';
import type { Services } from '../services.js';
import { priceMicros, unitsFor } from './billing.service.js';

let services: Services;
let close: () => Promise<void>;
let drop: () => Promise<void>;
const clock = new ManualClock('2026-11-30T23:59:00Z');

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  const core = await openCore(testCoreOptions(database.url, clock));
  services = core.services;
  close = core.close;
});
afterAll(async () => {
  await close();
  await drop();
});

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
    const team = await services.teams.createTeam('billing');
    const key = await services.teams.createKey(team.id, { spendingLimitMicros: 100n });
    const payer = { teamId: team.id, keyId: key.keyId };
    const item = { meter: 'webhooks.delivery_16k' as const, units: 1, resourceId: 'wdm_x' };
    await services.teams.setPaymentCard(team.id, false);
    await expect(services.db.transaction((tx) => services.billing.charge(tx, payer, [item]))).rejects.toMatchObject({
      code: 'billing_required',
    });
    await services.teams.setPaymentCard(team.id, true);
    await services.db.transaction((tx) => services.billing.charge(tx, payer, [item, item]));
    await expect(services.db.transaction((tx) => services.billing.charge(tx, payer, [item]))).rejects.toMatchObject({
      code: 'spending_limit',
    });
    expect(await services.billing.monthToDateMicros(services.db.manager, key.keyId)).toBe(100n);
    clock.advance(60_000);
    await services.db.transaction((tx) => services.billing.charge(tx, payer, [item]));
    expect(await services.billing.monthToDateMicros(services.db.manager, key.keyId)).toBe(50n);
  });

  it('never lets concurrent charges pass the limit together', async () => {
    const team = await services.teams.createTeam('race');
    const key = await services.teams.createKey(team.id, { spendingLimitMicros: 500n });
    const payer = { teamId: team.id, keyId: key.keyId };
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        services.db.transaction((tx) =>
          services.billing.charge(tx, payer, [{ meter: 'webhooks.delivery_16k', units: 1, resourceId: 'm' }]),
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect(await services.billing.monthToDateMicros(services.db.manager, key.keyId)).toBe(500n);
  });
});
