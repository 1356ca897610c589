import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.js';
import { useTestCore } from '../testing/test-core.js';
import { DELIVERY_WAKE_CHANNEL, parseWakePayload } from '../deliveries/delivery.jobs.js';
import { flushWakes, wakeEndpoints } from './wake-endpoints.js';

/**
 * Wake-ups from one place (docs/delivery.md, "Wake-ups"): sent after the transaction that made the work due commits,
 * never inside it, merged into one notification per moment, and not at all for a transaction that rolled back.
 */
const core = useTestCore(systemClock);
let listener: pg.Client;
const received: string[] = [];

beforeAll(async () => {
  const options = core.services.db.options as { url?: string };
  listener = new pg.Client({ connectionString: options.url });
  await listener.connect();
  listener.on('notification', (message) => received.push(message.payload ?? ''));
  await listener.query(`LISTEN ${DELIVERY_WAKE_CHANNEL}`);
});
afterAll(async () => {
  await listener.end();
});

async function settled(): Promise<string[]> {
  await flushWakes(core.services.db);
  // The notification travels through Postgres to the listener's connection.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return received.splice(0);
}

describe('wakeEndpoints', () => {
  it('inside a transaction: nothing until it commits, then one notification with every endpoint once', async () => {
    const { db } = core.services;
    await db.transaction(async (tx) => {
      wakeEndpoints(tx, ['wde_a', 'wde_b']);
      wakeEndpoints(tx, ['wde_b', 'wde_c'], { reread: true });
      await new Promise((resolve) => setTimeout(resolve, 150));
      // Not sent while the transaction is open (an owner woken now would find nothing committed).
      expect(received).toEqual([]);
    });
    const payloads = await settled();
    expect(payloads).toHaveLength(1);
    expect(parseWakePayload(payloads[0])).toEqual([
      { endpointId: 'wde_a', reread: false },
      { endpointId: 'wde_b', reread: true },
      { endpointId: 'wde_c', reread: true },
    ]);
  });

  it('a transaction that rolls back wakes no one; outside a transaction the wake-up goes at once', async () => {
    const { db } = core.services;
    await expect(
      db.transaction(async (tx) => {
        wakeEndpoints(tx, ['wde_rolled_back']);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await settled()).toEqual([]);

    wakeEndpoints(db, ['wde_now']);
    expect(await settled()).toEqual(['wde_now']);
  });

  it('merges the wake-ups of many commits of one moment, and splits what does not fit one notification', async () => {
    const { db } = core.services;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => db.transaction(async (tx) => wakeEndpoints(tx, [`wde_m${i}`]))),
    );
    const merged = await settled();
    expect(merged.length).toBeLessThan(10);
    expect(merged.flatMap((p) => parseWakePayload(p)!.map((t) => t.endpointId)).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `wde_m${i}`).sort(),
    );

    const many = Array.from({ length: 600 }, (_, i) => `wde_${String(i).padStart(26, '0')}`);
    wakeEndpoints(db, many);
    const split = await settled();
    expect(split.length).toBeGreaterThan(1);
    for (const payload of split) expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    expect(split.flatMap((p) => parseWakePayload(p)!.map((t) => t.endpointId))).toEqual(many);
  });
});
