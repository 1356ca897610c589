import type { EntityManager } from 'typeorm';
import { queryRows } from '../common/transaction.js';
import type { Clock } from '../common/clock.js';
import { newId } from '../common/ids.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { subscriptionDeliveryJob } from './subscription.jobs.js';

export const FLAG_UPDATED = 'feature_flags.flag.updated';
export const WEBHOOK_TEST = 'feature_flags.webhook.test';
export const EVENTS_WILDCARD = 'feature_flags.*';
/** Names a subscription may list in `events`. */
export const SUBSCRIBABLE_EVENTS = [FLAG_UPDATED, EVENTS_WILDCARD] as const;

export interface NewPlatformEvent {
  teamId: string;
  type: typeof FLAG_UPDATED | typeof WEBHOOK_TEST;
  environmentId: string | null;
  revision: string | null;
  data: Record<string, unknown>;
  /** Only this subscription gets it (the test event); otherwise every enabled matching one. */
  subscriptionId?: string;
}

/**
 * Writes a platform event and its deliveries inside the transaction of the change it describes, so an event exists
 * exactly when its change commits and every matching subscription has its delivery queued.
 *
 * Each matching subscription's `last_sequence` is raised under its row lock, taken in ID order (no deadlocks
 * between concurrent changes): a second transaction touching the same subscription waits for the first to commit
 * before it takes the next number, so sequence order is commit order per subscription.
 */
export class PlatformEventWriter {
  constructor(
    private readonly clock: Clock,
    private readonly jobs: JobQueue,
  ) {}

  async write(tx: EntityManager, event: NewPlatformEvent): Promise<{ id: string; createdAt: Date }> {
    const now = this.clock.now();
    const id = newId('platformEvent', this.clock);
    const rows: { id: string; last_sequence: string }[] = await queryRows<{ id: string; last_sequence: string }>(
      tx,
      `WITH ev AS (
         INSERT INTO platform_events (id, team_id, type, environment_id, revision, data, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
       ), targets AS (
         SELECT id FROM event_subscriptions
          WHERE team_id = $2 AND deleted_at IS NULL
            AND ($8::text IS NOT NULL AND id = $8
                 OR $8::text IS NULL AND enabled AND $4 = ANY(environment_ids) AND events && $9::text[])
          ORDER BY id FOR NO KEY UPDATE
       )
       UPDATE event_subscriptions s SET last_sequence = s.last_sequence + 1
         FROM targets WHERE s.id = targets.id
       RETURNING s.id, s.last_sequence`,
      [
        id,
        event.teamId,
        event.type,
        event.environmentId,
        event.revision,
        JSON.stringify(event.data),
        now,
        event.subscriptionId ?? null,
        [event.type, EVENTS_WILDCARD],
      ],
    );
    if (rows.length === 0) return { id, createdAt: now };
    const deliveryIds = rows.map(() => newId('subscriptionDelivery', this.clock));
    await tx.query(
      `INSERT INTO subscription_deliveries (id, subscription_id, team_id, event_id, sequence, trigger, status, ordered,
         next_attempt_at, created_at, updated_at)
       SELECT d.id, d.subscription_id, $3, $4, d.sequence, 'event', 'pending', true, $5, $5, $5
         FROM unnest($1::text[], $2::text[], $6::bigint[]) AS d(id, subscription_id, sequence)`,
      [deliveryIds, rows.map((r) => r.id), event.teamId, id, now, rows.map((r) => r.last_sequence)],
    );
    await this.jobs.send(
      tx,
      subscriptionDeliveryJob,
      deliveryIds.map((deliveryId) => ({ payload: { delivery_id: deliveryId } })),
    );
    return { id, createdAt: now };
  }
}
