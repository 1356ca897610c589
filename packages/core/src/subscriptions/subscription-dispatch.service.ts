import { queryRows } from '../common/transaction.js';
import type { DataSource, EntityManager } from 'typeorm';
import type { EgressOutcome } from '@svc/egress';
import { addMs, formatTimestamp, SECOND, type Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import type { Sealer } from '../common/sealing.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { chatDeliveryUrl, classifyChatResponse, renderChatPayload, type ChangeSummary } from './chat-formats.js';
import {
  ACKNOWLEDGE_TIMEOUT_MS,
  MAX_BLOCK_MS,
  nextAttemptDelayMs,
  PLATFORM_HISTORY_MS,
  SUBSCRIPTION_LEASE_MS,
  svcVerdict,
  type SubscriptionVerdict,
} from './subscription-delivery-policy.js';
import { subscriptionDeliveryJob } from './subscription.jobs.js';
import type { SubscriptionFormat } from './subscription.inputs.js';
import { cancelPendingDeliveries, subscriptionSecretContext } from './subscription.service.js';

/** One attempt, ready to sign and send: IDs, the exact body, and the secrets that sign it now. */
export interface ClaimedSubscriptionAttempt {
  deliveryId: string;
  subscriptionId: string;
  eventId: string;
  /** This attempt's number (1-based); settlement matches it, so a stale attempt cannot settle a newer claim. */
  attempt: number;
  url: string;
  format: SubscriptionFormat;
  body: Buffer;
  /** The current secret first, then the previous one during a rotation overlap. */
  secrets: string[];
  timeoutMs: number;
}

export interface SubscriptionAttemptOutcome {
  claimed: ClaimedSubscriptionAttempt;
  sent: EgressOutcome;
}

interface ClaimRow {
  id: string;
  subscription_id: string;
  event_id: string;
  sequence: string;
  attempt_count: number;
  url: string;
  format: SubscriptionFormat;
  secret_sealed: Buffer;
  secret_version: number;
  previous_secret_sealed: Buffer | null;
  previous_secret_version: number | null;
  secret_rotation_ends_at: Date | null;
  type: string;
  event_created_at: Date;
  team_id: string;
  environment_id: string | null;
  revision: string | null;
  data: Record<string, unknown>;
  environment_name: string | null;
}

export interface SubscriptionDispatchDeps {
  db: DataSource;
  clock: Clock;
  sealer: Sealer;
  jobs: JobQueue;
  /** The console's address for links in chat summaries (null: no links). */
  consoleUrl: string | null;
}

/** What the sweep did (tests and logs). */
export interface SubscriptionSweepReport {
  released: number;
  requeued: number;
  expired: number;
  purgedDeliveries: number;
  purgedEvents: number;
}

const PURGE_BATCH = 1000;

/** The standard-format body: the event, with the subscription's sequence number so receivers can check order. */
export function renderEventBody(
  row: Pick<
    ClaimRow,
    'event_id' | 'type' | 'event_created_at' | 'team_id' | 'environment_id' | 'revision' | 'data' | 'sequence'
  >,
): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: row.event_id,
      type: row.type,
      created_at: formatTimestamp(row.event_created_at),
      team_id: row.team_id,
      environment_id: row.environment_id,
      revision: row.revision === null ? null : String(row.revision),
      sequence: Number(row.sequence),
      data: row.data,
    }),
    'utf8',
  );
}

/**
 * The ordered delivery engine of event subscriptions. A delivery may go when it is due, not leased, and either
 * first among its subscription's pending ordered deliveries (commit order) or out of the order (a manual retry,
 * or one that blocked for 24 hours). Claim, attempt and settle follow the webhook engine: a lease in Postgres, the
 * same egress client, one transaction per settlement that also queues whatever became eligible.
 */
export class SubscriptionDispatchService {
  constructor(private readonly deps: SubscriptionDispatchDeps) {}

  async claim(deliveryId: string): Promise<ClaimedSubscriptionAttempt | null> {
    const now = this.deps.clock.now();
    const row = await this.deps.db.transaction(async (tx) => {
      await this.releaseIfBlockedTooLong(tx, deliveryId, now);
      const rows: ClaimRow[] = await queryRows<ClaimRow>(
        tx,
        `WITH c AS (
           SELECT d.id FROM subscription_deliveries d JOIN event_subscriptions s ON s.id = d.subscription_id
            WHERE d.id = $1 AND d.status = 'pending' AND d.next_attempt_at <= $2
              AND (d.lease_until IS NULL OR d.lease_until <= $2)
              AND s.deleted_at IS NULL AND (s.enabled OR d.trigger = 'manual')
              AND (NOT d.ordered OR NOT EXISTS (
                    SELECT 1 FROM subscription_deliveries e
                     WHERE e.subscription_id = d.subscription_id AND e.status = 'pending' AND e.ordered
                       AND e.sequence < d.sequence))
            FOR NO KEY UPDATE OF d SKIP LOCKED
         )
         UPDATE subscription_deliveries d SET lease_until = $3, attempt_count = d.attempt_count + 1, updated_at = $2
           FROM c, event_subscriptions s, platform_events e
           LEFT JOIN feature_flag_environments env ON env.id = e.environment_id
          WHERE d.id = c.id AND s.id = d.subscription_id AND e.id = d.event_id
         RETURNING d.id, d.subscription_id, d.event_id, d.sequence, d.attempt_count, s.url, s.format,
                   s.secret_sealed, s.secret_version, s.previous_secret_sealed, s.previous_secret_version,
                   s.secret_rotation_ends_at, e.type, e.created_at AS event_created_at, e.team_id, e.environment_id,
                   e.revision, e.data, env.name AS environment_name`,
        [deliveryId, now, addMs(now, SUBSCRIPTION_LEASE_MS)],
      );
      if (rows[0]) return rows[0];
      await this.followLease(tx, deliveryId, now);
      return null;
    });
    if (!row) return null;
    const secrets = [
      this.deps.sealer.open(row.secret_sealed, subscriptionSecretContext(row.subscription_id, row.secret_version)),
    ];
    if (
      row.previous_secret_sealed &&
      row.previous_secret_version !== null &&
      row.secret_rotation_ends_at &&
      row.secret_rotation_ends_at > now
    )
      secrets.push(
        this.deps.sealer.open(
          row.previous_secret_sealed,
          subscriptionSecretContext(row.subscription_id, row.previous_secret_version),
        ),
      );
    const chat = row.format !== 'svc' ? row.format : null;
    return {
      deliveryId: row.id,
      subscriptionId: row.subscription_id,
      eventId: row.event_id,
      attempt: row.attempt_count,
      url: chat ? chatDeliveryUrl(chat, row.url) : row.url,
      format: row.format,
      body: chat ? renderChatPayload(chat, this.summary(row)) : renderEventBody(row),
      secrets,
      timeoutMs: ACKNOWLEDGE_TIMEOUT_MS,
    };
  }

  private summary(row: ClaimRow): ChangeSummary {
    const data = row.data;
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    const change = text(data['change']);
    const link = this.deps.consoleUrl
      ? row.environment_id
        ? `${this.deps.consoleUrl}/feature-flags/${row.environment_id}`
        : `${this.deps.consoleUrl}/event-subscriptions/${row.subscription_id}`
      : null;
    return {
      eventId: row.event_id,
      type: row.type,
      createdAt: row.event_created_at,
      environment:
        row.environment_id === null
          ? null
          : { id: row.environment_id, name: row.environment_name ?? row.environment_id },
      revision: row.revision === null ? null : String(row.revision),
      flagKey: text(data['flag_key']),
      change: change === 'created' || change === 'updated' || change === 'deleted' ? change : null,
      changedFields: Array.isArray(data['changed_fields'])
        ? data['changed_fields'].filter((f): f is string => typeof f === 'string')
        : [],
      actorKeyId: text(data['actor_key_id']),
      consoleUrl: link,
      subscriptionId: row.subscription_id,
    };
  }

  /** What the answer means, per format. */
  verdict(claimed: ClaimedSubscriptionAttempt, sent: EgressOutcome): SubscriptionVerdict {
    if (sent.kind !== 'response')
      return { kind: 'retry', retryAfterSeconds: null, reason: `${sent.kind}: ${sent.reason}` };
    if (claimed.format === 'svc') return svcVerdict(sent);
    return classifyChatResponse(claimed.format, sent);
  }

  /** Records the attempt and moves the delivery on, in one transaction (docs/platform.md, "Delivery"). */
  async settle(outcome: SubscriptionAttemptOutcome): Promise<SubscriptionVerdict> {
    const { claimed, sent } = outcome;
    const verdict = this.verdict(claimed, sent);
    const now = this.deps.clock.now();
    await this.deps.db.transaction(async (tx) => {
      // A settlement that disables the subscription locks it first, in the order every other writer of both rows
      // uses (subscription, then its deliveries), so it cannot deadlock with a PATCH or DELETE of the subscription.
      if (verdict.kind === 'failed' && verdict.disable)
        await tx.query(`SELECT 1 FROM event_subscriptions WHERE id = $1 FOR NO KEY UPDATE`, [claimed.subscriptionId]);
      await tx.query(
        `INSERT INTO subscription_attempts (id, delivery_id, attempt, attempted_at, status_code, error_kind, error,
           duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
        [
          newId('subscriptionAttempt', this.deps.clock),
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
        await this.finish(tx, claimed.deliveryId, 'succeeded', null, now);
        if (row.ordered) await this.queueHead(tx, row.subscription_id, now);
        return;
      }
      const delayMs =
        verdict.kind === 'retry' && row.trigger === 'event'
          ? nextAttemptDelayMs(row.attempt_count, verdict.retryAfterSeconds)
          : null;
      if (delayMs === null) {
        await this.finish(tx, claimed.deliveryId, 'failed', verdict.reason, now);
        if (verdict.kind === 'failed' && verdict.disable)
          await this.disableSubscription(
            tx,
            row.subscription_id,
            claimed.format === 'svc' ? 'endpoint_gone' : 'chat_webhook_gone',
            now,
          );
        else if (row.ordered) await this.queueHead(tx, row.subscription_id, now);
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
      await this.deps.jobs.send(tx, subscriptionDeliveryJob, jobs);
      if (release) await this.queueHead(tx, row.subscription_id, now);
    });
    return verdict;
  }

  private async finish(
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
  private async disableSubscription(tx: EntityManager, subscriptionId: string, reason: string, now: Date) {
    await tx.query(
      `UPDATE event_subscriptions SET enabled = false, disabled_reason = $2, version = version + 1, updated_at = $3
        WHERE id = $1 AND enabled`,
      [subscriptionId, reason, now],
    );
    await cancelPendingDeliveries(tx, subscriptionId, now);
  }

  /** Queues the first pending ordered delivery of the subscription (it may go once the one before it is done). */
  private async queueHead(tx: EntityManager, subscriptionId: string, now: Date): Promise<void> {
    const rows: { id: string; next_attempt_at: Date | null }[] = await tx.query(
      `SELECT id, next_attempt_at FROM subscription_deliveries
        WHERE subscription_id = $1 AND status = 'pending' AND ordered ORDER BY sequence LIMIT 1`,
      [subscriptionId],
    );
    const head = rows[0];
    if (!head) return;
    const at = head.next_attempt_at && head.next_attempt_at > now ? head.next_attempt_at : undefined;
    await this.deps.jobs.send(tx, subscriptionDeliveryJob, [
      { payload: { delivery_id: head.id }, ...(at ? { startAfter: at } : {}) },
    ]);
  }

  /**
   * A claim refused because another attempt holds the lease: that attempt settles (and queues what follows), or its
   * worker died. A job at the lease's end makes sure a crash is retried then, not only when the sweep comes by.
   */
  private async followLease(tx: EntityManager, deliveryId: string, now: Date): Promise<void> {
    const rows: { lease_until: Date }[] = await tx.query(
      `SELECT lease_until FROM subscription_deliveries WHERE id = $1 AND status = 'pending' AND lease_until > $2`,
      [deliveryId, now],
    );
    if (rows[0])
      await this.deps.jobs.send(tx, subscriptionDeliveryJob, [
        { payload: { delivery_id: deliveryId }, startAfter: addMs(rows[0].lease_until, SECOND) },
      ]);
  }

  /** A delivery that blocked its subscription for 24 hours steps out of the order; the next one may go. */
  private async releaseIfBlockedTooLong(tx: EntityManager, deliveryId: string, now: Date): Promise<void> {
    const rows: { subscription_id: string }[] = await queryRows<{ subscription_id: string }>(
      tx,
      `UPDATE subscription_deliveries SET ordered = false, released_at = $2, updated_at = $2
        WHERE id = $1 AND status = 'pending' AND ordered AND blocking_since <= $3
        RETURNING subscription_id`,
      [deliveryId, now, addMs(now, -MAX_BLOCK_MS)],
    );
    if (rows[0]) await this.queueHead(tx, rows[0].subscription_id, now);
  }

  /**
   * The safety net (every minute): releases blocks past 24 hours whose release job was lost, queues deliveries
   * that may go but have had no job for two minutes, ends deliveries still pending after 30 days, and purges
   * history past 30 days in batches.
   */
  async sweep(): Promise<SubscriptionSweepReport> {
    const now = this.deps.clock.now();
    const report: SubscriptionSweepReport = {
      released: 0,
      requeued: 0,
      expired: 0,
      purgedDeliveries: 0,
      purgedEvents: 0,
    };
    await this.deps.db.transaction(async (tx) => {
      const released: { subscription_id: string }[] = await queryRows<{ subscription_id: string }>(
        tx,
        `UPDATE subscription_deliveries SET ordered = false, released_at = $1, updated_at = $1
          WHERE status = 'pending' AND ordered AND blocking_since <= $2 RETURNING subscription_id`,
        [now, addMs(now, -MAX_BLOCK_MS)],
      );
      report.released = released.length;
      for (const id of new Set(released.map((r) => r.subscription_id))) await this.queueHead(tx, id, now);
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
      await this.deps.jobs.send(
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
      this.deps.db,
      `DELETE FROM subscription_deliveries WHERE id IN (
         SELECT id FROM subscription_deliveries WHERE created_at <= $1 AND status <> 'pending' LIMIT ${PURGE_BATCH})
       RETURNING id`,
      [cutoff],
    );
    report.purgedDeliveries = purgedDeliveries.length;
    const purgedEvents: unknown[] = await queryRows<unknown>(
      this.deps.db,
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
}
