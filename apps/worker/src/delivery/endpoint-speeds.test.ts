import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * Endpoints' speeds outlive the worker that learnt them (docs/delivery.md, "Fairness"; migration 0042). With two slots
 * (one of them the reserve slow work may not take), an endpoint known fast may take the last free slot while a slow
 * receiver holds the other; one of unknown speed may not, and waits for the slow answer. After a deploy (a new worker
 * process, its memory empty) the fast endpoint must still be known fast. Real clock, real receivers.
 */
let stack: DeliveryStack;
const SLOW_MS = 3_000;

beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 2 }, { realClock: true });
}, 60_000);
afterAll(async () => {
  await stack.close();
});

const arrivals = (path: string) => stack.received.filter((r) => r.path === path);

async function savedSpeed(endpointId: string): Promise<{ mean_ms: number; updated_at: Date } | undefined> {
  const rows: { mean_ms: number; updated_at: Date }[] = await stack.h.services.db.query(
    'SELECT mean_ms, updated_at FROM endpoint_speeds WHERE endpoint_id = $1',
    [endpointId],
  );
  return rows[0];
}

describe('endpoint speeds', () => {
  it('a new worker knows a fast endpoint is fast before its first attempt, so a slow receiver does not hold it back', async () => {
    const fast = await stack.setup('/known-fast');
    const slow = await stack.setup('/slow-beside');
    stack.delays.set('/slow-beside', SLOW_MS);

    await stack.publish(fast.tenantId, { n: 1 });
    await stack.until('the first delivery', () => (arrivals('/known-fast').length === 1 ? true : undefined));
    const saved = await stack.until('the speed saved', () => savedSpeed(fast.endpointId));
    expect(saved.mean_ms).toBeLessThan(1_000);
    // A second fast answer does not change the class: nothing is written again.
    await stack.publish(fast.tenantId, { n: 2 });
    await stack.until('the second delivery', () => (arrivals('/known-fast').length === 2 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await savedSpeed(fast.endpointId))?.updated_at).toEqual(saved.updated_at);

    // A deploy: a new worker process, which gains every partition with an empty memory.
    await stack.stopWorker();
    await stack.startWorker();
    for (let i = 0; i < 3; i += 1) await stack.publish(slow.tenantId, { i });
    await stack.until('the slow attempt', () => (arrivals('/slow-beside').length >= 1 ? true : undefined));
    const sentAt = Date.now();
    await stack.publish(fast.tenantId, { n: 3 });
    await stack.until('the third delivery', () => (arrivals('/known-fast').length === 3 ? true : undefined));
    // Known fast, it takes the last free slot at once; of unknown speed it waited for the slow answer (3 s).
    expect(arrivals('/known-fast')[2]!.at - sentAt).toBeLessThan(SLOW_MS / 2);
  }, 60_000);
});
