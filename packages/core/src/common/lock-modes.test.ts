import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { openCore } from '../boot.js';
import { TenantEntity } from '../tenants/tenant.entity.js';
import { testCoreOptions } from '../testing/core-options.js';
import type { Services } from '../services.js';
import { ManualClock } from './clock.js';
import { lockOwned, lockTeam } from './transaction.js';

let services: Services;
let close: () => Promise<void>;
let drop: () => Promise<void>;
const clock = new ManualClock('2026-11-02T10:00:00Z');

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

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)),
  ]);
}

describe('lock modes', () => {
  it('an in-flight configuration write does not stall a charge insert that references the same rows', async () => {
    const team = await services.teams.createTeam('locks');
    const key = await services.teams.createKey(team.id);
    const tenant = await services.tenants.createTenant(
      { actor: { teamId: team.id, keyId: key.keyId } },
      { external_id: 'locked', name: 'Locked', metadata: {} },
    );
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // A configuration write holding the team's quota lock and the tenant row, as creates and PATCHes do.
    const write = services.db.transaction(async (tx) => {
      await lockTeam(tx, team.id);
      await lockOwned(tx, TenantEntity, team.id, tenant.id, 'tenant');
      locked();
      await finished;
    });
    await isLocked;
    try {
      const charged = await within(
        3000,
        services.db.transaction((tx) =>
          services.billing.charge(tx, { teamId: team.id, keyId: key.keyId }, [
            { meter: 'webhooks.ingest_64k', units: 1, resourceId: 'wdm_lock' },
          ]),
        ),
      );
      expect(charged).toBe(10n);
    } finally {
      finish();
      await write;
    }
  });

  it('quota-checked creates of one team are still serialised', async () => {
    const team = await services.teams.createTeam('serial');
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = services.db.transaction(async (tx) => {
      await lockTeam(tx, team.id);
      locked();
      await finished;
    });
    await isLocked;
    let second = false;
    const waiter = services.db.transaction(async (tx) => {
      await lockTeam(tx, team.id);
      second = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(second).toBe(false);
    finish();
    await holder;
    await waiter;
    expect(second).toBe(true);
  });
});
