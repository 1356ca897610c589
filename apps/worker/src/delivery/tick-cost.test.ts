import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * The engine's tick looks at the endpoints that have something to do now (a wake-up, a settle, a due time reached),
 * not at every endpoint with work somewhere in the future (docs/delivery.md, "The engine"): 100 endpoints holding
 * deliveries scheduled an hour ahead cost a look each per second, not one per tick, while another endpoint delivers.
 */
let stack: DeliveryStack;
const WAITING = 100;

beforeAll(async () => {
  stack = await startDeliveryStack({ config_writes_per_second: 1_000 }, { realClock: true });
}, 60_000);
afterAll(async () => {
  await stack.close();
});

async function looked(): Promise<number> {
  const metric = await stack.h.services.metrics.dispatchLanesLookedAt.get();
  return metric.values[0]?.value ?? 0;
}

describe('the tick', () => {
  it('looks at the endpoints with something to do, not at every endpoint with work later', async () => {
    const { h } = stack;
    const tenant = await post(h, '/tenants', { external_id: 't-later', name: 'Later' });
    for (let i = 0; i < WAITING; i += 1) {
      const endpoint = await post(h, '/endpoints', { tenant_id: tenant.json.id, url: `${stack.base}/later-${i}` });
      expect(endpoint.status, endpoint.text).toBe(201);
    }
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await post(h, '/messages', {
      tenant_id: tenant.json.id,
      event_type: 'order.created',
      payload: {},
      deliver_at: inAnHour,
    });
    expect(scheduled.status, scheduled.text).toBe(202);
    // The admission's wake-up makes a lane of each of them; their claims find nothing due yet.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const { tenantId } = await stack.setup('/now');
    const before = await looked();
    const started = Date.now();
    const DELIVERIES = 30;
    for (let i = 0; i < DELIVERIES; i += 1) {
      await stack.publish(tenantId, { i });
      await stack.until(`delivery ${i}`, () =>
        stack.received.filter((r) => r.path === '/now').length > i ? true : undefined,
      );
    }
    const seconds = (Date.now() - started) / 1000;
    const lookedAt = (await looked()) - before;
    // Each delivery is at least one tick (its claim) and one more after its settle: had every tick looked at every
    // lane, that would be over 2 × 30 × 100 looks. The waiting lanes are looked at once a second, plus a handful.
    expect(lookedAt).toBeLessThan(WAITING * (Math.ceil(seconds) + 2) + DELIVERIES * 10);
    expect(lookedAt).toBeLessThan(2 * DELIVERIES * WAITING);
    expect(stack.received.filter((r) => r.path.startsWith('/later-'))).toEqual([]);
  }, 120_000);
});
