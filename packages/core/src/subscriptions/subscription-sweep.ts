import type { DataSource } from 'typeorm';
import { addMs, type Clock } from '../common/clock.js';
import { queryRows } from '../common/transaction.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { MAX_BLOCK_MS, PLATFORM_HISTORY_MS } from './subscription-delivery-policy.js';
import { queueSubscriptionHead } from './subscription-order.js';
import { subscriptionDeliveryJob } from './subscription.jobs.js';

/** What the sweep did (tests and logs). */
export interface SubscriptionSweepReport {
  released: number;
  requeued: number;
  expired: number;
  purgedDeliveries: number;
  purgedEvents: number;
}

const PURGE_BATCH = 1000;

/**
 * The safety net (every minute): releases blocks past 24 hours whose release job was lost, queues deliveries
 * that may go but have had no job for two minutes, ends deliveries still pending after 30 days, and purges
 * history past 30 days in batches.
 */
export async function sweepSubscriptionDeliveries(deps: {
  db: DataSource;
  clock: Clock;
  jobs: JobQueue;
}): Promise<SubscriptionSweepReport> {
  const now = deps.clock.now();
  const report: SubscriptionSweepReport = {
    released: 0,
    requeued: 0,
    expired: 0,
    purgedDeliveries: 0,
    purgedEvents: 0,
  };
  await deps.db.transaction(async (tx) => {
    const released: { subscription_id: string }[] = await queryRows<{ subscription_id: string }>(
      tx,
      `UPDATE subscription_deliveries SET ordered = false, released_at = $1, updated_at = $1
        WHERE status = 'pending' AND ordered AND blocking_since <= $2 RETURNING subscription_id`,
      [now, addMs(now, -MAX_BLOCK_MS)],
    );
    report.released = released.length;
    for (const id of new Set(released.map((r) => r.subscription_id)))
      await queueSubscriptionHead(tx, deps.jobs, id, now);
    const stranded: { id: string }[] = await tx.query(
      `SELECT d.id FROM subscription_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until <= $1)
          AND (NOT d.ordered OR NOT EXISTS (
                SELECT 1 FROM subscription_deliveries e
                 WHERE e.subscription_id = d.subscription_id AND e.status = 'pending' AND e.ordered
                   AND e.sequence < d.sequence))
        LIMIT 500`,
      [now, addMs(now, -2 * 60_000)],
    );
    report.requeued = stranded.length;
    await deps.jobs.send(
      tx,
      subscriptionDeliveryJob,
      stranded.map((row) => ({ payload: { delivery_id: row.id } })),
    );
    const expired: unknown[] = await queryRows<unknown>(
      tx,
      `UPDATE subscription_deliveries SET status = 'failed', next_attempt_at = NULL, lease_until = NULL,
              last_error = 'still pending after 30 days (history is kept 30 days)', updated_at = $1
        WHERE status = 'pending' AND created_at <= $2 RETURNING id`,
      [now, addMs(now, -PLATFORM_HISTORY_MS)],
    );
    report.expired = expired.length;
  });
  const cutoff = addMs(now, -PLATFORM_HISTORY_MS);
  const purgedDeliveries: unknown[] = await queryRows<unknown>(
    deps.db,
    `DELETE FROM subscription_deliveries WHERE id IN (
       SELECT id FROM subscription_deliveries WHERE created_at <= $1 AND status <> 'pending' LIMIT ${PURGE_BATCH})
     RETURNING id`,
    [cutoff],
  );
  report.purgedDeliveries = purgedDeliveries.length;
  const purgedEvents: unknown[] = await queryRows<unknown>(
    deps.db,
    `DELETE FROM platform_events WHERE id IN (
       SELECT id FROM platform_events e WHERE e.created_at <= $1
          AND NOT EXISTS (SELECT 1 FROM subscription_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
        LIMIT ${PURGE_BATCH})
     RETURNING id`,
    [cutoff],
  );
  report.purgedEvents = purgedEvents.length;
  return report;
}
