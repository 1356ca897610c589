import type { EntityManager } from 'typeorm';
import type { EgressOutcome } from '@svc/egress';
import { addMs, type Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { classifyChatResponse } from './chat-formats.js';
import type { ClaimedSubscriptionAttempt } from './subscription-claim.js';
import {
  MAX_BLOCK_MS,
  nextAttemptDelayMs,
  svcVerdict,
  type SubscriptionVerdict,
} from './subscription-delivery-policy.js';
import { queueSubscriptionHead } from './subscription-order.js';
import { subscriptionDeliveryJob } from './subscription.jobs.js';
import { cancelPendingDeliveries } from './subscription.service.js';

/** What the answer means, per format. */
export function attemptVerdict(claimed: ClaimedSubscriptionAttempt, sent: EgressOutcome): SubscriptionVerdict {
  if (sent.kind !== 'response')
    return { kind: 'retry', retryAfterSeconds: null, reason: `${sent.kind}: ${sent.reason}` };
  if (claimed.format === 'svc') return svcVerdict(sent);
  return classifyChatResponse(claimed.format, sent);
}

/**
 * Records the attempt and moves the delivery on, in `tx` (docs/platform.md, "Delivery"): done, retried later (an
 * ordered one stepping out of the order after 24 hours), or failed, disabling a subscription whose receiver is gone.
 */
export async function settleAttempt(
  tx: EntityManager,
  deps: { clock: Clock; jobs: JobQueue },
  claimed: ClaimedSubscriptionAttempt,
  sent: EgressOutcome,
  verdict: SubscriptionVerdict,
  now: Date,
): Promise<void> {
  // A settlement that disables the subscription locks it first, in the order every other writer of both rows
  // uses (subscription, then its deliveries), so it cannot deadlock with a PATCH or DELETE of the subscription.
  if (verdict.kind === 'failed' && verdict.disable)
    await tx.query(`SELECT 1 FROM event_subscriptions WHERE id = $1 FOR NO KEY UPDATE`, [claimed.subscriptionId]);
  await tx.query(
    `INSERT INTO subscription_attempts (id, delivery_id, attempt, attempted_at, status_code, error_kind, error,
     duration_ms)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
    [
      newId('subscriptionAttempt', deps.clock),
      claimed.deliveryId,
      claimed.attempt,
      addMs(now, -Math.round(sent.durationMs)),
      sent.kind === 'response' ? sent.status : null,
      verdict.kind === 'succeeded' ? null : sent.kind === 'response' ? 'http_status' : sent.kind,
      verdict.kind === 'succeeded' ? null : verdict.reason.slice(0, 300),
      Math.round(sent.durationMs),
    ],
  );
  const rows: {
    status: string;
    ordered: boolean;
    trigger: string;
    attempt_count: number;
    blocking_since: Date | null;
    subscription_id: string;
  }[] = await tx.query(
    `SELECT status, ordered, trigger, attempt_count, blocking_since, subscription_id
     FROM subscription_deliveries WHERE id = $1 FOR NO KEY UPDATE`,
    [claimed.deliveryId],
  );
  const row = rows[0];
  if (!row) return;
  if (row.status !== 'pending' || row.attempt_count !== claimed.attempt) {
    // Canceled (its subscription was deleted or disabled) while this attempt was in flight: it may complete.
    if (row.status === 'canceled' && verdict.kind === 'succeeded' && row.attempt_count === claimed.attempt)
      await tx.query(
        `UPDATE subscription_deliveries SET status = 'succeeded', lease_until = NULL, updated_at = $2 WHERE id = $1`,
        [claimed.deliveryId, now],
      );
    return;
  }
  if (verdict.kind === 'succeeded') {
    await finishDelivery(tx, claimed.deliveryId, 'succeeded', null, now);
    if (row.ordered) await queueSubscriptionHead(tx, deps.jobs, row.subscription_id, now);
    return;
  }
  const delayMs =
    verdict.kind === 'retry' && row.trigger === 'event'
      ? nextAttemptDelayMs(row.attempt_count, verdict.retryAfterSeconds)
      : null;
  if (delayMs === null) {
    await finishDelivery(tx, claimed.deliveryId, 'failed', verdict.reason, now);
    if (verdict.kind === 'failed' && verdict.disable)
      await disableSubscription(
        tx,
        row.subscription_id,
        claimed.format === 'svc' ? 'endpoint_gone' : 'chat_webhook_gone',
        now,
      );
    else if (row.ordered) await queueSubscriptionHead(tx, deps.jobs, row.subscription_id, now);
    return;
  }
  const next = addMs(now, delayMs);
  const blockingSince = row.ordered ? (row.blocking_since ?? now) : row.blocking_since;
  const release = row.ordered && now.getTime() - blockingSince!.getTime() >= MAX_BLOCK_MS;
  await tx.query(
    `UPDATE subscription_deliveries
      SET next_attempt_at = $2, lease_until = NULL, blocking_since = $3, last_error = $4,
          ordered = ordered AND NOT $5, released_at = CASE WHEN $5 THEN $6 ELSE released_at END, updated_at = $6
    WHERE id = $1`,
    [claimed.deliveryId, next, blockingSince, verdict.reason.slice(0, 300), release, now],
  );
  const jobs = [{ payload: { delivery_id: claimed.deliveryId }, startAfter: next }];
  // The end of the 24-hour block falls between two retries: a job then releases the later events.
  if (row.ordered && !release && row.blocking_since === null)
    jobs.push({ payload: { delivery_id: claimed.deliveryId }, startAfter: addMs(blockingSince!, MAX_BLOCK_MS) });
  await deps.jobs.send(tx, subscriptionDeliveryJob, jobs);
  if (release) await queueSubscriptionHead(tx, deps.jobs, row.subscription_id, now);
}

async function finishDelivery(
  tx: EntityManager,
  deliveryId: string,
  status: 'succeeded' | 'failed',
  error: string | null,
  now: Date,
): Promise<void> {
  await tx.query(
    `UPDATE subscription_deliveries SET status = $2, lease_until = NULL, next_attempt_at = NULL, last_error = $3,
            updated_at = $4
      WHERE id = $1`,
    [deliveryId, status, error === null ? null : error.slice(0, 300), now],
  );
}

/** The receiver is gone (410, a revoked chat webhook): stop the subscription and what it has queued. */
async function disableSubscription(tx: EntityManager, subscriptionId: string, reason: string, now: Date) {
  await tx.query(
    `UPDATE event_subscriptions SET enabled = false, disabled_reason = $2, version = version + 1, updated_at = $3
      WHERE id = $1 AND enabled`,
    [subscriptionId, reason, now],
  );
  await cancelPendingDeliveries(tx, subscriptionId, now);
}
