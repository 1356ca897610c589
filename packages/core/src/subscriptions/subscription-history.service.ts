import type { DataSource } from 'typeorm';
import { addMs, type Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { notFound, ServiceError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, encodeCursor, parseLimit, type ListScope, type Page } from '../common/paging.js';
import { inTransaction, reader } from '../common/transaction.js';
import { assertAdministers } from '../feature-flags/environment-access.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { PLATFORM_HISTORY_MS } from './subscription-delivery-policy.js';
import { subscriptionDeliveryJob } from './subscription.jobs.js';
import type { ListPlatformEventsQuery, ListSubscriptionDeliveriesQuery } from './subscription.inputs.js';
import {
  toPlatformEventView,
  type PlatformEventRow,
  type PlatformEventView,
  type SubscriptionAttemptView,
  type SubscriptionDeliveryStatus,
  type SubscriptionDeliveryView,
} from './subscription.view.js';

interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  sequence: string;
  trigger: 'event' | 'manual';
  retry_of: string | null;
  status: SubscriptionDeliveryStatus;
  ordered: boolean;
  attempt_count: number;
  next_attempt_at: Date | null;
  released_at: Date | null;
  waiting: boolean;
  created_at: Date;
  updated_at: Date;
}

/** An attempt as json_agg gives it (timestamps as text). */
interface JsonAttempt {
  id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error_kind: string | null;
  error: string | null;
  duration_ms: number;
}

export interface HistoryDeps {
  db: DataSource;
  clock: Clock;
  jobs: JobQueue;
}

/** The 30-day history: a subscription's deliveries with their attempts, manual retries, and the team's events. */
export class SubscriptionHistoryService {
  constructor(private readonly deps: HistoryDeps) {}

  private since(): Date {
    return addMs(this.deps.clock.now(), -PLATFORM_HISTORY_MS);
  }

  private async requireSubscription(ctx: CallContext, id: string): Promise<{ environment_ids: string[] }> {
    const rows: { environment_ids: string[] }[] = await reader(this.deps.db, ctx).query(
      `SELECT environment_ids FROM event_subscriptions WHERE id = $1 AND team_id = $2 AND deleted_at IS NULL`,
      [id, ctx.actor.teamId],
    );
    if (!rows[0]) throw notFound('event subscription');
    return rows[0];
  }

  /** Newest first, 30 days, each with its attempts (oldest attempt first). */
  async listDeliveries(
    ctx: CallContext,
    subscriptionId: string,
    query: ListSubscriptionDeliveriesQuery,
  ): Promise<Page<SubscriptionDeliveryView>> {
    // The request's fields before the lookup, as on every list (docs/api-choices.md, the order of the common checks).
    const limit = parseLimit(query.limit);
    await this.requireSubscription(ctx, subscriptionId);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: `subscription_deliveries:${subscriptionId}`,
      filters: { status: query.status ?? null, event_id: query.event_id ?? null },
    };
    const before = decodeCursor(scope, query.cursor);
    // One statement, so a delivery and its attempts are read at the same moment (a settlement committing between
    // two reads would show a new attempt next to the old state).
    const rows: (DeliveryRow & { attempts: JsonAttempt[] })[] = await reader(this.deps.db, ctx).query(
      `SELECT d.id, d.subscription_id, d.event_id, e.type AS event_type, d.sequence, d.trigger, d.retry_of, d.status,
              d.ordered, d.attempt_count, d.next_attempt_at, d.released_at, d.created_at, d.updated_at,
              d.status = 'pending' AND d.ordered AND EXISTS (
                SELECT 1 FROM subscription_deliveries p WHERE p.subscription_id = d.subscription_id
                   AND p.status = 'pending' AND p.ordered AND p.sequence < d.sequence) AS waiting,
              coalesce((SELECT json_agg(json_build_object('id', a.id, 'attempt', a.attempt,
                                 'attempted_at', a.attempted_at, 'status_code', a.status_code,
                                 'error_kind', a.error_kind, 'error', a.error, 'duration_ms', a.duration_ms)
                                 ORDER BY a.attempt)
                          FROM subscription_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts
         FROM subscription_deliveries d JOIN platform_events e ON e.id = d.event_id
        WHERE d.subscription_id = $1 AND d.created_at > $2 AND ($3::text IS NULL OR d.id < $3)
          AND ($4::text IS NULL OR d.status = $4) AND ($5::text IS NULL OR d.event_id = $5)
        ORDER BY d.id DESC LIMIT $6`,
      [subscriptionId, this.since(), before, query.status ?? null, query.event_id ?? null, limit + 1],
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return {
      data: page.map((row) => toDeliveryView(row, row.attempts)),
      nextCursor: more ? encodeCursor(scope, page[page.length - 1]!.id) : null,
    };
  }

  /**
   * A manual retry: a new delivery of the original event (same event ID and sequence number, so receivers can
   * recognise it), attempted once at once, outside the commit order.
   */
  async retryDelivery(
    ctx: CallContext,
    subscriptionId: string,
    deliveryId: string,
  ): Promise<{ id: string; eventId: string }> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const subscriptions: { environment_ids: string[] }[] = await tx.query(
        `SELECT environment_ids FROM event_subscriptions
          WHERE id = $1 AND team_id = $2 AND deleted_at IS NULL FOR NO KEY UPDATE`,
        [subscriptionId, ctx.actor.teamId],
      );
      if (!subscriptions[0]) throw notFound('event subscription');
      assertAdministers(ctx.actor, subscriptions[0].environment_ids);
      const originals: { event_id: string; sequence: string; created_at: Date }[] = await tx.query(
        `SELECT event_id, sequence, created_at FROM subscription_deliveries WHERE id = $1 AND subscription_id = $2`,
        [deliveryId, subscriptionId],
      );
      const original = originals[0];
      if (!original || original.created_at <= this.since()) throw notFound('delivery');
      const events: unknown[] = await tx.query(`SELECT 1 FROM platform_events WHERE id = $1`, [original.event_id]);
      if (events.length === 0) throw new ServiceError('invalid_state', 'the event is past its 30 days of history');
      const id = newId('subscriptionDelivery', this.deps.clock);
      const now = this.deps.clock.now();
      await tx.query(
        `INSERT INTO subscription_deliveries (id, subscription_id, team_id, event_id, sequence, trigger, retry_of,
           status, ordered, next_attempt_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'manual', $6, 'pending', false, $7, $7, $7)`,
        [id, subscriptionId, ctx.actor.teamId, original.event_id, original.sequence, deliveryId, now],
      );
      await this.deps.jobs.send(tx, subscriptionDeliveryJob, [{ payload: { delivery_id: id } }]);
      return { id, eventId: original.event_id };
    });
  }

  /** The team's events, newest first, 30 days; filters by exact type and environment. */
  async listEvents(ctx: CallContext, query: ListPlatformEventsQuery): Promise<Page<PlatformEventView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'platform_events',
      filters: { type: query.type ?? null, environment_id: query.environment_id ?? null },
    };
    const before = decodeCursor(scope, query.cursor);
    const rows: PlatformEventRow[] = await reader(this.deps.db, ctx).query(
      `SELECT id, team_id, type, environment_id, revision, data, created_at FROM platform_events
        WHERE team_id = $1 AND created_at > $2 AND ($3::text IS NULL OR id < $3)
          AND ($4::text IS NULL OR type = $4) AND ($5::text IS NULL OR environment_id = $5)
        ORDER BY id DESC LIMIT $6`,
      [ctx.actor.teamId, this.since(), before, query.type ?? null, query.environment_id ?? null, limit + 1],
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    return {
      data: page.map(toPlatformEventView),
      nextCursor: more ? encodeCursor(scope, page[page.length - 1]!.id) : null,
    };
  }

  async getEvent(ctx: CallContext, id: string): Promise<PlatformEventView> {
    const rows: PlatformEventRow[] = await reader(this.deps.db, ctx).query(
      `SELECT id, team_id, type, environment_id, revision, data, created_at FROM platform_events
        WHERE id = $1 AND team_id = $2 AND created_at > $3`,
      [id, ctx.actor.teamId, this.since()],
    );
    if (!rows[0]) throw notFound('event');
    return toPlatformEventView(rows[0]);
  }
}

function toDeliveryView(row: DeliveryRow, attempts: JsonAttempt[]): SubscriptionDeliveryView {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type,
    sequence: String(row.sequence),
    trigger: row.trigger,
    retryOf: row.retry_of,
    status: row.status,
    ordered: row.ordered,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === 'pending' && !row.waiting ? row.next_attempt_at : null,
    releasedAt: row.released_at,
    attempts: attempts.map((a): SubscriptionAttemptView => ({
      id: a.id,
      attempt: a.attempt,
      attemptedAt: new Date(a.attempted_at),
      statusCode: a.status_code,
      errorKind: a.error_kind,
      error: a.error,
      durationMs: a.duration_ms,
    })),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
