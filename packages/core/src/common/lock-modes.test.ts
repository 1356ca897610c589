import { describe, expect, it } from 'vitest';
import { TenantEntity } from '../tenants/tenant.entity.js';
import { useTestCore } from '../testing/test-core.js';
import { ManualClock } from './clock.js';
import { lockOwned, lockTeam } from './transaction.js';

const clock = new ManualClock('2026-11-02T10:00:00Z');
const core = useTestCore(clock);

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)),
  ]);
}

describe('lock modes', () => {
  it('an in-flight configuration write does not stall a charge insert that references the same rows', async () => {
    const team = await core.services.teams.createTeam('locks');
    const key = await core.services.teams.createKey(team.id);
    const tenant = await core.services.tenants.createTenant(
      { actor: { teamId: team.id, keyId: key.keyId } },
      { external_id: 'locked', name: 'Locked', metadata: {} },
    );
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // A configuration write holding the team's quota lock and the tenant row, as creates and PATCHes do.
    const write = core.services.db.transaction(async (tx) => {
      await lockTeam(tx, team.id);
      await lockOwned(tx, TenantEntity, team.id, tenant.id, 'tenant');
      locked();
      await finished;
    });
    await isLocked;
    try {
      const charged = await within(
        3000,
        core.services.db.transaction((tx) =>
          core.services.billing.charge(tx, { teamId: team.id, keyId: key.keyId }, [
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
    const team = await core.services.teams.createTeam('serial');
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = core.services.db.transaction(async (tx) => {
      await lockTeam(tx, team.id);
      locked();
      await finished;
    });
    await isLocked;
    let second = false;
    const waiter = core.services.db.transaction(async (tx) => {
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
