import { describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.js';
import { useTestCore } from '../testing/test-core.js';
import { DISPATCH_PARTITIONS } from './dispatch-partitions.js';

/**
 * Partition ownership on the real clock (docs/delivery.md, "Endpoint ownership"): a claim holds the owner's
 * partitions while it runs, and the owner's heartbeat must renew them, not give them away.
 */
const core = useTestCore(systemClock);

const ALL = Array.from({ length: DISPATCH_PARTITIONS }, (_, i) => i);

describe('the heartbeat', () => {
  it('keeps every partition the worker owns while a claim of its holds them', async () => {
    const { services } = core;
    const worker = 'wkr_own_keep';
    expect((await services.ownership.heartbeat(worker)).partitions).toEqual(ALL);

    // A claim's hold on the owned partitions, kept open on another connection.
    const runner = services.db.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(`SELECT partition FROM dispatch_partitions WHERE owner = $1 FOR KEY SHARE`, [worker]);
      const beat = await services.ownership.heartbeat(worker);
      expect(beat.partitions).toEqual(ALL);
      await runner.rollbackTransaction();
      const [row]: { owned: number }[] = await services.db.query(
        `SELECT count(*)::int AS owned FROM dispatch_partitions WHERE owner = $1 AND lease_until > now()`,
        [worker],
      );
      expect(row!.owned).toBe(DISPATCH_PARTITIONS);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
      await services.ownership.leave(worker);
    }
  });

  it('keeps every partition under a claim loop on another connection, beat after beat', async () => {
    const { services } = core;
    const worker = 'wkr_own_loop';
    await services.ownership.heartbeat(worker);
    let claiming = true;
    let claims = 0;
    const loop = (async () => {
      while (claiming) {
        await services.dispatch.claim(worker, [{ endpointId: 'wde_none', want: 1, mine: 0 }], {
          slots: { limit: 6, running: 0, teams: 0, starved: false },
        });
        claims += 1;
      }
    })();
    // At least 20 beats, and on until 20 claims ran beside them (a loaded machine runs fewer claims a beat; a
    // fixed number of beats once saw 19).
    let beats = 0;
    try {
      while (beats < 20 || (claims < 20 && beats < 400)) {
        const membership = await services.ownership.heartbeat(worker);
        expect(membership.partitions).toEqual(ALL);
        beats += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      claiming = false;
      await loop;
      await services.ownership.leave(worker);
    }
    expect(claims).toBeGreaterThanOrEqual(20);
  });

  it('takes another worker’s partitions only once their lease has lapsed, and shares them with a second worker', async () => {
    const { services } = core;
    // The workers of the tests before this one have left (each leaves in a finally).
    await services.ownership.heartbeat('wkr_own_a');
    const second = await services.ownership.heartbeat('wkr_own_b');
    // A's leases are live: B takes nothing of them at its first beat.
    expect(second.partitions).toEqual([]);
    expect(second.liveWorkers).toBe(2);
    // A gives up what is over its share (half) at its next beat; B takes the free ones.
    const a = await services.ownership.heartbeat('wkr_own_a');
    const b = await services.ownership.heartbeat('wkr_own_b');
    expect(a.partitions).toHaveLength(DISPATCH_PARTITIONS / 2);
    expect(b.partitions).toHaveLength(DISPATCH_PARTITIONS / 2);
    expect(new Set([...a.partitions, ...b.partitions]).size).toBe(DISPATCH_PARTITIONS);
    await services.ownership.leave('wkr_own_a');
    await services.ownership.leave('wkr_own_b');
  });
});
