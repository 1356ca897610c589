import type { EntityManager } from 'typeorm';
import { addMs, SECOND } from '../common/clock.js';
import { queryRows } from '../common/transaction.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { MAX_BLOCK_MS } from './subscription-delivery-policy.js';
import { subscriptionDeliveryJob } from './subscription.jobs.js';

// The order of a subscription's deliveries: which one may go next, and the jobs that make sure it does.

/** Queues the first pending ordered delivery of the subscription (it may go once the one before it is done). */
export async function queueSubscriptionHead(
  tx: EntityManager,
  jobs: JobQueue,
  subscriptionId: string,
  now: Date,
): Promise<void> {
  const rows: { id: string; next_attempt_at: Date | null }[] = await tx.query(
    `SELECT id, next_attempt_at FROM subscription_deliveries
      WHERE subscription_id = $1 AND status = 'pending' AND ordered ORDER BY sequence LIMIT 1`,
    [subscriptionId],
  );
  const head = rows[0];
  if (!head) return;
  const at = head.next_attempt_at && head.next_attempt_at > now ? head.next_attempt_at : undefined;
  await jobs.send(tx, subscriptionDeliveryJob, [
    { payload: { delivery_id: head.id }, ...(at ? { startAfter: at } : {}) },
  ]);
}

/**
 * A claim refused because another attempt holds the lease: that attempt settles (and queues what follows), or its
 * worker died. A job at the lease's end makes sure a crash is retried then, not only when the sweep comes by.
 */
export async function followLease(tx: EntityManager, jobs: JobQueue, deliveryId: string, now: Date): Promise<void> {
  const rows: { lease_until: Date }[] = await tx.query(
    `SELECT lease_until FROM subscription_deliveries WHERE id = $1 AND status = 'pending' AND lease_until > $2`,
    [deliveryId, now],
  );
  if (rows[0])
    await jobs.send(tx, subscriptionDeliveryJob, [
      { payload: { delivery_id: deliveryId }, startAfter: addMs(rows[0].lease_until, SECOND) },
    ]);
}

/** A delivery that blocked its subscription for 24 hours steps out of the order; the next one may go. */
export async function releaseIfBlockedTooLong(
  tx: EntityManager,
  jobs: JobQueue,
  deliveryId: string,
  now: Date,
): Promise<void> {
  const rows: { subscription_id: string }[] = await queryRows<{ subscription_id: string }>(
    tx,
    `UPDATE subscription_deliveries SET ordered = false, released_at = $2, updated_at = $2
      WHERE id = $1 AND status = 'pending' AND ordered AND blocking_since <= $3
      RETURNING subscription_id`,
    [deliveryId, now, addMs(now, -MAX_BLOCK_MS)],
  );
  if (rows[0]) await queueSubscriptionHead(tx, jobs, rows[0].subscription_id, now);
}
