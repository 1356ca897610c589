import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsRollupJob, nextRollupRun, ROLLUP_INTERVAL_MS } from '@svc/core';
import { startDeliveryStack, type DeliveryStack } from '../delivery/delivery.testing.js';

let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack();
});
afterAll(async () => {
  await stack.close();
});

describe('the analytics rollup job', () => {
  it('folds what was published into GET /analytics and queues its next run once, ~20 s later', async () => {
    const { h } = stack;
    const { tenantId } = await stack.setup('/rollup-job');
    await stack.publish(tenantId, { a: 1 });
    await stack.publish(tenantId, { a: 2 });
    const window = `created_after=2026-11-02T00:00:00Z&created_before=2026-11-03T00:00:00Z`;
    const before = await h.request('GET', `/analytics?${window}`);
    expect(before.json.data[10].admitted_messages).toBe(0);

    // As pg-boss cron sends it every minute.
    await h.services.db.transaction((tx) => h.services.jobs.send(tx, analyticsRollupJob, [{ payload: {} }]));
    stack.worker.notify();
    const after = await stack.until('the rollup to run', async () => {
      const response = await h.request('GET', `/analytics?${window}`);
      return response.json.data[10].admitted_messages === 2 ? response.json : undefined;
    });
    expect(after.data[10]).toMatchObject({ admitted_messages: 2, deliveries: 2 });

    // The run queued the next interval's run, with an ID of its own interval: asking again adds none.
    const { id, startAfter } = nextRollupRun(h.clock.now());
    const queued = async () =>
      (await h.services.db.query(`SELECT start_after FROM pgboss.job WHERE name = $1 AND id = $2`, [
        analyticsRollupJob.queue,
        id,
      ])) as { start_after: Date }[];
    const [next] = await stack.until('the next run to be queued', async () => {
      const rows = await queued();
      return rows.length > 0 ? rows : undefined;
    });
    expect(startAfter.getTime() - h.clock.now().getTime()).toBeLessThanOrEqual(ROLLUP_INTERVAL_MS);
    expect(next!.start_after.getTime()).toBeGreaterThan(Date.now() - 5000);
    await h.services.analytics.scheduleNextRollup();
    await h.services.analytics.scheduleNextRollup();
    expect(await queued()).toHaveLength(1);
  });
});
