import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * An ordered endpoint's head and its next claim share a round trip (docs/delivery.md, "Ordered endpoints") only where
 * a tick would give it the slot anyway: with one slot in the whole deployment, a backlog behind an ordered endpoint
 * must not keep that slot while another endpoint's delivery waits for it.
 */
let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 1 });
});
afterAll(async () => {
  await stack.close();
});

describe('an ordered backlog and the deployment’s slots', () => {
  it('gives the slot a head frees to a waiting endpoint, not back to the ordered endpoint', async () => {
    stack.delays.set('/ordered-backlog', 20);
    const ordered = await stack.setup('/ordered-backlog', { ordering: 'ordered' });
    const other = await stack.setup('/waiting');
    for (let i = 0; i < 40; i += 1) await stack.publish(ordered.tenantId, { i });
    await stack.until('the ordered backlog to start', () =>
      stack.received.filter((r) => r.path === '/ordered-backlog').length >= 3 ? true : undefined,
    );
    const published = Date.now();
    await stack.publish(other.tenantId, { waiting: true });
    const waited = await stack.until('the waiting delivery', () => stack.received.find((r) => r.path === '/waiting'));
    const orderedBetween = stack.received.filter(
      (r) => r.path === '/ordered-backlog' && r.at > published && r.at < waited.at,
    ).length;
    // The first slot freed after the wake-up goes to it (a head or two may still pass while the wake-up is on its
    // way); the ordered endpoint does not keep the slot through its backlog.
    expect(orderedBetween).toBeLessThanOrEqual(3);
    await stack.until('the ordered backlog to drain', () =>
      stack.received.filter((r) => r.path === '/ordered-backlog').length === 40 ? true : undefined,
    );
    expect(stack.peakConcurrency.get('/ordered-backlog')).toBe(1);
  });
});
