import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * Settling a delivery rewrites its row in place: a HOT update, with no new entry in any of the row's seven indexes.
 * That holds only while no indexed column changes (a partial index's predicate counts) and the row's page has room,
 * so the dead letters are listed from a table of their own that triggers keep (migration 0044), and the deliveries
 * partitions leave a fifth of each page free. Real worker, real receiver, Postgres's own counters.
 */
let stack: DeliveryStack;

beforeAll(async () => {
  stack = await startDeliveryStack();
});
afterAll(async () => {
  await stack.close();
});

/** Postgres's counts of row updates in the deliveries partitions, and how many of them were HOT. */
async function deliveryUpdates(): Promise<{ updated: number; hot: number }> {
  const [row]: { updated: number; hot: number }[] = await stack.h.services.db.query(
    `SELECT coalesce(sum(n_tup_upd), 0)::int AS updated, coalesce(sum(n_tup_hot_upd), 0)::int AS hot
       FROM pg_stat_user_tables
      WHERE relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'deliveries'::regclass)`,
  );
  return row!;
}

async function deadLetters(): Promise<{ id: string; team_id: string }[]> {
  return stack.h.services.db.query('SELECT id, team_id FROM delivery_dead_letters ORDER BY id');
}

describe('settlement writes', () => {
  it('settle each delivery with a HOT update of its row', async () => {
    const { tenantId } = await stack.setup('/in-place');
    const before = await deliveryUpdates();
    const count = 12;
    for (let n = 1; n <= count; n += 1) {
      await stack.publish(tenantId, { n });
      await stack.until(`delivery ${n}`, () =>
        stack.received.filter((r) => r.path === '/in-place').length >= n ? true : undefined,
      );
    }
    // Each backend reports its counts to the statistics a second or so after it goes idle.
    const after = await stack.until(
      'the settlements counted',
      async () => {
        const now = await deliveryUpdates();
        return now.updated - before.updated >= count ? now : undefined;
      },
      15_000,
    );
    const updated = after.updated - before.updated;
    const hot = after.hot - before.hot;
    expect(updated).toBeGreaterThanOrEqual(count);
    expect(hot / updated).toBeGreaterThanOrEqual(0.9);
  }, 60_000);

  it('list a delivery among the dead letters from when it fails or expires until it leaves them', async () => {
    const { tenantId } = await stack.setup('/dead-letter');
    const messageId = await stack.publish(tenantId, { n: 1 });
    await stack.until('the delivery', () => (stack.received.some((r) => r.path === '/dead-letter') ? true : undefined));
    const [delivery]: { id: string; team_id: string }[] = await stack.h.services.db.query(
      'SELECT id, team_id FROM deliveries WHERE message_id = $1',
      [messageId],
    );
    const setStatus = (status: string) =>
      stack.h.services.db.query('UPDATE deliveries SET status = $2 WHERE id = $1', [delivery!.id, status]);
    expect(await deadLetters()).toEqual([]);
    await setStatus('failed');
    expect(await deadLetters()).toEqual([delivery]);
    await setStatus('expired');
    expect(await deadLetters()).toEqual([delivery]);
    await setStatus('succeeded');
    expect(await deadLetters()).toEqual([]);
    await setStatus('expired');
    expect(await deadLetters()).toEqual([delivery]);
    await stack.h.services.db.query('DELETE FROM attempts WHERE delivery_id = $1', [delivery!.id]);
    await stack.h.services.db.query('DELETE FROM deliveries WHERE id = $1', [delivery!.id]);
    expect(await deadLetters()).toEqual([]);
  });
});
