import type { DataSource, EntityManager } from 'typeorm';
import { parseStrict } from '@svc/json';
import { priceMicros, unitsFor, type BillingService } from '../billing/billing.service.js';
import { formatUsd } from '../catalog/catalog.js';
import type { Limits } from '../catalog/limits.js';
import { DAY, HOUR, type Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { notFound, ServiceError } from '../common/errors.js';
import {
  checkEach,
  decodeCursor,
  orderSql,
  parseLimit,
  passed,
  rowsByRequest,
  toPage,
  withOrder,
  type ListScope,
  type Page,
  type PageAnswer,
} from '../common/paging.js';
import { inTransaction, lockTeamQueue, reader } from '../common/transaction.js';
import { MAX_WINDOW_DAYS, openWindowedPage, windowedCursor } from '../common/window.js';
import { compileRules } from '../endpoints/endpoint-rules.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { wakeEndpoints } from '../engine/wake-endpoints.js';
import { DELIVERY_COLUMNS } from './delivery-columns.js';
import { readDeliveryTargets, readEarlierGenerations, type DeliveryTarget } from './delivery-context.js';
import { DELIVERY_FROM, LEASE_JOIN, shownStatusSql } from './delivery-status.js';
import { checkDeliveryListPairings, latestGenerationSql } from './delivery-list-filters.js';
import { repairedBySql } from './repairs.js';
import { insertGenerations } from './replay-generations.js';
import type { ListAttemptsQuery, ListDeliveriesQuery, ReplayDeliveryInput } from './delivery.inputs.js';
import {
  toAttemptView,
  toDeliveryView,
  type AttemptRecordRow,
  type AttemptView,
  type DeliveryRecordRow,
  type DeliveryView,
} from './delivery.view.js';

export interface DeliveryServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  jobs: JobQueue;
  billing: BillingService;
}

const FINISHED = new Set(['succeeded', 'failed', 'expired', 'canceled']);
/** At most this many deliveries are priced in one quote (a console selection). */
export const MAX_QUOTE_ITEMS = 200;

export interface ReplayQuoteItem {
  delivery_id: string;
  replayable: boolean;
  /** The error a replay would answer (invalid_state, payload_expired, transform_failed, not_found). */
  error_code: string | null;
  reason: string | null;
  delivery_units: number;
  total_usd: string;
  /** A dead letter a later generation already repaired: that generation's ID (replaying it pays again). */
  repaired_by: string | null;
}

export interface ReplayQuote {
  items: ReplayQuoteItem[];
  delivery_units: number;
  total_usd: string;
  /** Items already repaired, and the units and price of the replayable items that are not. */
  repaired_count: number;
  unrepaired_delivery_units: number;
  unrepaired_total_usd: string;
}

interface ReplaySourceRow {
  id: string;
  team_id: string;
  tenant_id: string;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  status: string;
  body: Buffer | null;
  content_type: string;
  redacted_at: Date | null;
  content: Buffer | null;
  retained_until: Date;
  endpoint_status: 'enabled' | 'paused' | 'disabled';
  endpoint_deleted: boolean;
  transform: string | null;
  generation: number;
  pending: string;
  content_bytes: string;
  repaired_by: string | null;
}

/** An attempt as the API shows it; the response body only within the team's response retention ($3 is now). */
const ATTEMPT_COLUMNS = `
  a.id, a.delivery_id, a.endpoint_id, a.number, a.trigger, a.started_at, a.duration_ms, a.url_revision,
  a.status_code, a.error_kind, a.error_detail,
  CASE WHEN a.created_at > $3::timestamptz - make_interval(days => coalesce(s.response_retention_days, 7))
       THEN a.response_body END AS response_body,
  a.created_at`;

/** One page of a message's deliveries (GraphQL `Message.deliveries`). */
export interface MessageDeliveriesRequest {
  messageId: string;
  /** The message's creation: its deliveries are listed in the 30 days from it. */
  createdAt: Date;
  limit?: unknown;
  cursor?: unknown;
}

/** One page of a delivery's attempts (GraphQL `Delivery.attempts`). */
export interface DeliveryAttemptsRequest {
  deliveryId: string;
  limit?: unknown;
  cursor?: unknown;
}

/** What a cursor of GET /deliveries is bound to: the team and the filters as sent (the window parameters too). */
function deliveryListScope(teamId: string, query: Omit<ListDeliveriesQuery, 'limit' | 'cursor'>): ListScope {
  return {
    teamId,
    list: 'deliveries',
    filters: withOrder(
      {
        created_after: query.created_after ?? null,
        created_before: query.created_before ?? null,
        status: query.status ?? null,
        message_id: query.message_id ?? null,
        endpoint_id: query.endpoint_id ?? null,
        tenant_id: query.tenant_id ?? null,
        event_type: query.event_type ?? null,
        kind: query.kind ?? null,
        // Only when sent, so the cursors of lists without them stay what they were.
        ...(query.repaired === undefined ? {} : { repaired: query.repaired }),
        ...(query.sequence === undefined ? {} : { sequence: query.sequence }),
        ...(query.latest_generation === undefined ? {} : { latest_generation: query.latest_generation }),
      },
      query.order,
    ),
  };
}

/** What a cursor of GET /deliveries/{id}/attempts is bound to. */
function attemptListScope(teamId: string, deliveryId: string): ListScope {
  return { teamId, list: 'attempts', filters: { delivery_id: deliveryId } };
}

/**
 * Deliveries and attempts for support staff: lists (dead letters are the failed and expired ones), one delivery,
 * its attempts, retry now (free, uses the remaining attempts) and replay (a new paid generation).
 */
export class DeliveryService {
  constructor(private readonly deps: DeliveryServiceDeps) {}

  /**
   * GET /deliveries: oldest first within the window (newest first with `order`), paged by (created_at, id) either way
   * along the team's (created_at, id) indexes (deliveries_dead_letters_idx for dead letters).
   */
  async listDeliveries(ctx: CallContext, query: ListDeliveriesQuery): Promise<Page<DeliveryView>> {
    const now = this.deps.clock.now();
    const limit = parseLimit(query.limit);
    checkDeliveryListPairings(query);
    const scope = deliveryListScope(ctx.actor.teamId, query);
    const { window, position } = openWindowedPage(scope, query, now, 'wdd_');
    const deadLetters = query.status === 'failed' || query.status === 'expired';
    const order = orderSql(query.order);
    const rows: DeliveryRecordRow[] = await reader(this.deps.db, ctx).query(
      `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM}
        WHERE d.team_id = $2 AND d.created_at >= $3 AND d.created_at < $4
          ${deadLetters ? `AND d.status IN ('failed', 'expired')` : ''}
          AND ($5::text IS NULL OR ${shownStatusSql('$1')} = $5)
          AND ($6::text IS NULL OR d.message_id = $6)
          AND ($7::text IS NULL OR d.endpoint_id = $7)
          AND ($8::text IS NULL OR d.tenant_id = $8)
          AND ($9::text IS NULL OR d.event_type = $9)
          AND ($10::text IS NULL OR ($10 = 'original') = (d.generation = 0))
          AND ($11::timestamptz IS NULL OR (d.created_at, d.id) ${order.after} ($11::timestamptz, $12::text))
          AND ($14::boolean IS NULL OR ((${repairedBySql('d')}) IS NOT NULL) = $14)
          AND ($15::bigint IS NULL OR d.sequence = $15)
          ${query.latest_generation ? `AND NOT EXISTS (${latestGenerationSql('d')})` : ''}
        ORDER BY d.created_at ${order.direction}, d.id ${order.direction}
        LIMIT $13`,
      [
        now,
        ctx.actor.teamId,
        window.after,
        window.before,
        query.status ?? null,
        query.message_id ?? null,
        query.endpoint_id ?? null,
        query.tenant_id ?? null,
        query.event_type ?? null,
        query.kind ?? null,
        position?.createdAt ?? null,
        position?.id ?? null,
        limit + 1,
        query.repaired ?? null,
        query.sequence ?? null,
      ],
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toDeliveryView),
      nextCursor: more && last ? windowedCursor(scope, window, last) : null,
    };
  }

  async getDelivery(ctx: CallContext, id: string): Promise<DeliveryView> {
    return toDeliveryView(await this.readDelivery(reader(this.deps.db, ctx), ctx.actor.teamId, id));
  }

  /**
   * GET /deliveries/{id}/attempts: oldest first. Response bodies show only while the team's
   * response_retention_days has not passed (the sweep erases them; a shorter setting hides them at once).
   */
  async listAttempts(ctx: CallContext, deliveryId: string, query: ListAttemptsQuery): Promise<Page<AttemptView>> {
    const db = reader(this.deps.db, ctx);
    const now = this.deps.clock.now();
    // The request's fields before the lookup, as on every list (docs/api-choices.md, the order of the common checks).
    const limit = parseLimit(query.limit);
    const scope = attemptListScope(ctx.actor.teamId, deliveryId);
    const after = decodeCursor(scope, query.cursor);
    await this.readDelivery(db, ctx.actor.teamId, deliveryId);
    const rows: AttemptRecordRow[] = await db.query(
      `SELECT ${ATTEMPT_COLUMNS}
         FROM attempts a LEFT JOIN team_settings s ON s.team_id = a.team_id
        WHERE a.delivery_id = $1 AND a.team_id = $2 AND ($4::text IS NULL OR a.id > $4)
        ORDER BY a.id
        LIMIT $5`,
      [deliveryId, ctx.actor.teamId, now, after, limit + 1],
    );
    return toPage(scope, rows, limit, toAttemptView);
  }

  /**
   * The deliveries of many messages, a page each, in one statement (GraphQL `Message.deliveries` for a page of
   * messages). Each page is the one GET /deliveries answers with `message_id` and the window of 30 days from the
   * message's creation (every delivery of a message is created within it), with the same cursors.
   */
  async listDeliveriesOfMessages(
    ctx: CallContext,
    requests: readonly MessageDeliveriesRequest[],
  ): Promise<PageAnswer<DeliveryView>[]> {
    const now = this.deps.clock.now();
    const checked = checkEach(requests, (request) => {
      const limit = parseLimit(request.limit);
      const query = {
        message_id: request.messageId,
        created_after: request.createdAt.toISOString(),
        created_before: new Date(request.createdAt.getTime() + MAX_WINDOW_DAYS * DAY).toISOString(),
        cursor: request.cursor,
      };
      const scope = deliveryListScope(ctx.actor.teamId, query);
      return { messageId: request.messageId, limit, scope, ...openWindowedPage(scope, query, now, 'wdd_') };
    });
    const valid = passed(checked);
    const rows: (DeliveryRecordRow & { ord: string })[] =
      valid.length === 0
        ? []
        : await reader(this.deps.db, ctx).query(
            `SELECT k.ord, ${DELIVERY_COLUMNS}
               FROM unnest($3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[], $7::text[], $8::int[])
                      WITH ORDINALITY AS k(message_id, after, before, position_at, position_id, lim, ord)
              CROSS JOIN LATERAL (
                SELECT * FROM deliveries x
                 WHERE x.team_id = $2 AND x.message_id = k.message_id
                   AND x.created_at >= k.after AND x.created_at < k.before
                   AND (k.position_at IS NULL OR (x.created_at, x.id) > (k.position_at, k.position_id))
                 ORDER BY x.created_at, x.id
                 LIMIT k.lim) d
              ${LEASE_JOIN}
              ORDER BY k.ord, d.created_at, d.id`,
            [
              now,
              ctx.actor.teamId,
              valid.map((entry) => entry.messageId),
              valid.map((entry) => entry.window.after),
              valid.map((entry) => entry.window.before),
              valid.map((entry) => entry.position?.createdAt ?? null),
              valid.map((entry) => entry.position?.id ?? null),
              valid.map((entry) => entry.limit + 1),
            ],
          );
    const grouped = rowsByRequest(rows, valid.length);
    let next = 0;
    return checked.map((entry) => {
      if (entry instanceof ServiceError) return entry;
      const group = grouped[next++] ?? [];
      const page = group.slice(0, entry.limit);
      const last = page[page.length - 1];
      return {
        data: page.map(toDeliveryView),
        nextCursor: group.length > entry.limit && last ? windowedCursor(entry.scope, entry.window, last) : null,
      };
    });
  }

  /** Where each delivery went (endpoint name, the URL of its attempt's revision), in one statement; null: not found. */
  async deliveryTargets(ctx: CallContext, deliveryIds: readonly string[]): Promise<(DeliveryTarget | null)[]> {
    return readDeliveryTargets(reader(this.deps.db, ctx), ctx.actor.teamId, deliveryIds);
  }

  /** Each delivery's earlier generations (same message and endpoint), newest first, in one statement. */
  async earlierGenerations(ctx: CallContext, deliveryIds: readonly string[]): Promise<DeliveryView[][]> {
    return readEarlierGenerations(reader(this.deps.db, ctx), ctx.actor.teamId, this.deps.clock.now(), deliveryIds);
  }

  /**
   * The attempts of many deliveries, a page each, in one statement (GraphQL `Delivery.attempts` for a page of
   * deliveries the caller has just read): each page and cursor is the one GET /deliveries/{id}/attempts answers.
   */
  async listAttemptsOfDeliveries(
    ctx: CallContext,
    requests: readonly DeliveryAttemptsRequest[],
  ): Promise<PageAnswer<AttemptView>[]> {
    const checked = checkEach(requests, (request) => {
      const limit = parseLimit(request.limit);
      const scope = attemptListScope(ctx.actor.teamId, request.deliveryId);
      return { deliveryId: request.deliveryId, limit, scope, after: decodeCursor(scope, request.cursor) };
    });
    const valid = passed(checked);
    const rows: (AttemptRecordRow & { ord: string })[] =
      valid.length === 0
        ? []
        : await reader(this.deps.db, ctx).query(
            `SELECT k.ord, ${ATTEMPT_COLUMNS}
               FROM unnest($2::text[], $4::text[], $5::int[]) WITH ORDINALITY AS k(delivery_id, after, lim, ord)
              CROSS JOIN LATERAL (
                SELECT * FROM attempts x
                 WHERE x.delivery_id = k.delivery_id AND x.team_id = $1 AND (k.after IS NULL OR x.id > k.after)
                 ORDER BY x.id
                 LIMIT k.lim) a
               LEFT JOIN team_settings s ON s.team_id = a.team_id
              ORDER BY k.ord, a.id`,
            [
              ctx.actor.teamId,
              valid.map((entry) => entry.deliveryId),
              this.deps.clock.now(),
              valid.map((entry) => entry.after),
              valid.map((entry) => entry.limit + 1),
            ],
          );
    const grouped = rowsByRequest(rows, valid.length);
    let next = 0;
    return checked.map((entry) =>
      entry instanceof ServiceError ? entry : toPage(entry.scope, grouped[next++] ?? [], entry.limit, toAttemptView),
    );
  }

  /**
   * POST /deliveries/{id}/retry_now: a delivery waiting for a retry, or held behind an open circuit, becomes due
   * now. It keeps its attempts (the next one is the next number) and costs nothing. Behind an open circuit the
   * attempt goes as the endpoint's probe. Anything else is 409 invalid_state.
   */
  async retryNow(ctx: CallContext, id: string): Promise<DeliveryView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const now = this.deps.clock.now();
      // Its queue row before the delivery, the order the engine locks them in. A leased row is an attempt in flight.
      const queue: { leased: boolean }[] = await tx.query(
        `SELECT lease_owner IS NOT NULL AS leased FROM delivery_queue WHERE delivery_id = $1 FOR UPDATE`,
        [id],
      );
      const inFlight = queue[0]?.leased === true;
      const rows: {
        status: string;
        endpoint_id: string;
        attempt_count: number;
        next_attempt_at: Date;
        expires_at: Date;
        endpoint_status: string;
        endpoint_deleted: boolean;
        circuit: string | null;
      }[] = await tx.query(
        `SELECT d.status, d.endpoint_id, d.attempt_count, d.next_attempt_at, d.expires_at, e.status AS endpoint_status,
                e.deleted_at IS NOT NULL AS endpoint_deleted, h.circuit
           FROM deliveries d
           JOIN endpoints e ON e.id = d.endpoint_id
           LEFT JOIN endpoint_health h ON h.endpoint_id = d.endpoint_id
          WHERE d.id = $1 AND d.team_id = $2
            FOR NO KEY UPDATE OF d`,
        [id, ctx.actor.teamId],
      );
      const row = rows[0];
      if (!row) throw notFound('delivery');
      const behindCircuit = row.status === 'queued' && row.circuit !== null && row.circuit !== 'closed';
      if (inFlight || (row.status !== 'retry_wait' && !behindCircuit))
        throw new ServiceError(
          'invalid_state',
          !inFlight && row.status === 'queued'
            ? 'the delivery is not waiting for a retry (only retry_wait, or queued behind an open circuit)'
            : `a ${inFlight ? 'in_flight' : displayStatus(row, now)} delivery cannot be retried now; replay a finished one instead`,
        );
      if (row.endpoint_deleted || row.endpoint_status !== 'enabled')
        throw new ServiceError(
          'invalid_state',
          `the endpoint is ${row.endpoint_deleted ? 'deleted' : row.endpoint_status}; enable or resume it first`,
        );
      if (row.expires_at <= now)
        throw new ServiceError('invalid_state', 'the delivery window is over: no attempt may start');
      // Due now in the queue; behind an open circuit, the probe may go now too (this attempt is the probe). The
      // endpoint's owner is woken at commit.
      await tx.query(
        `WITH queue AS (UPDATE delivery_queue SET due_at = $2 WHERE delivery_id = $1 AND lease_owner IS NULL),
         probe AS (
           UPDATE endpoint_health SET next_probe_at = $2
            WHERE endpoint_id = $3 AND circuit = 'open' AND (next_probe_at IS NULL OR next_probe_at > $2))
         UPDATE deliveries SET next_attempt_at = $2, next_trigger = 'retry_now', updated_at = $2 WHERE id = $1`,
        [id, now, row.endpoint_id],
      );
      wakeEndpoints(tx, [row.endpoint_id], { reread: true });
      return toDeliveryView(await this.readDelivery(tx, ctx.actor.teamId, id));
    });
  }

  /**
   * POST /deliveries/{id}/replay: a succeeded, failed or expired delivery becomes a new delivery generation (new
   * delivery ID, same webhook-id), charged to the caller as a delivery. The body is the frozen bytes the delivery
   * was sent with, or with configuration `current` the endpoint's current transform applied to the original
   * content. 410 payload_expired once the content is redacted or past retention; 409 invalid_state for pending or
   * canceled deliveries and for deleted or disabled endpoints.
   */
  async replay(ctx: CallContext, id: string, input: ReplayDeliveryInput): Promise<DeliveryView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { clock, limits } = this.deps;
      const now = clock.now();
      await lockTeamQueue(tx, ctx.actor.teamId);
      const source = await this.lockReplaySource(tx, ctx.actor.teamId, id);
      const problem = replayProblem(source, now);
      if (problem) throw problem;

      const body = input.configuration === 'frozen' ? source.body : this.currentTransform(source);
      const bytes = body?.length ?? source.content!.length;
      if (BigInt(source.pending) + 1n > BigInt(limits.max_pending_deliveries.value))
        throw new ServiceError('queue_full', 'the team has reached its limit of pending deliveries', {
          retryAfter: 5,
        });
      if (BigInt(source.content_bytes) + BigInt(body?.length ?? 0) > BigInt(limits.max_content_bytes.value))
        throw new ServiceError('queue_full', 'the team has reached its limit of stored content', { retryAfter: 5 });

      const units = unitsFor(bytes, 'webhooks.delivery_16k');
      const [deliveryId] = await insertGenerations(
        tx,
        this.deps,
        [
          {
            replayOf: source.id,
            tenantId: source.tenant_id,
            messageId: source.message_id,
            endpointId: source.endpoint_id,
            eventType: source.event_type,
            generation: source.generation + 1,
            contentType: source.content_type,
            body,
            bodyBytes: bytes,
            units,
          },
        ],
        {
          teamId: ctx.actor.teamId,
          payingKeyId: ctx.actor.keyId,
          replayId: null,
          windowMs: limits.delivery_window_hours.value * HOUR,
        },
      );
      // Last: the spend row stays locked only from here to the commit.
      await this.deps.billing.charge(tx, ctx.actor, [
        { meter: 'webhooks.delivery_16k', units, resourceId: deliveryId! },
      ]);
      return toDeliveryView(await this.readDelivery(tx, ctx.actor.teamId, deliveryId!));
    });
  }

  /**
   * The price of replaying deliveries, before anything is charged (the console shows it before a paid replay):
   * per delivery whether it can be replayed (else the error code it would get), its delivery units and whether a
   * later generation already repaired it (it can still be replayed, and paid for again: the totals without the
   * repaired ones are what replaying only the rest costs); nothing is stored or locked.
   */
  async quoteReplays(ctx: CallContext, ids: readonly string[], input: ReplayDeliveryInput): Promise<ReplayQuote> {
    const db = reader(this.deps.db, ctx);
    const now = this.deps.clock.now();
    const items: ReplayQuoteItem[] = [];
    const wanted = [...new Set(ids)];
    if (wanted.length > MAX_QUOTE_ITEMS)
      throw new ServiceError('invalid_field', `a quote prices at most ${MAX_QUOTE_ITEMS} deliveries`, {
        field: 'delivery_ids',
      });
    const sources = new Map((await this.readReplaySources(db, ctx.actor.teamId, wanted)).map((row) => [row.id, row]));
    for (const id of wanted) {
      const source = sources.get(id);
      if (!source) {
        items.push({
          delivery_id: id,
          replayable: false,
          error_code: 'not_found',
          reason: 'no such delivery',
          delivery_units: 0,
          total_usd: formatUsd(0n),
          repaired_by: null,
        });
        continue;
      }
      let problem = replayProblem(source, now);
      let units = 0;
      if (!problem) {
        try {
          const body = input.configuration === 'frozen' ? source.body : this.currentTransform(source);
          units = unitsFor(body?.length ?? source.content!.length, 'webhooks.delivery_16k');
        } catch (error) {
          if (!(error instanceof ServiceError)) throw error;
          problem = error;
        }
      }
      items.push({
        delivery_id: id,
        replayable: problem === null,
        error_code: problem?.code ?? null,
        reason: problem?.message ?? null,
        delivery_units: units,
        total_usd: formatUsd(priceMicros([{ meter: 'webhooks.delivery_16k', units, resourceId: id }])),
        repaired_by: source.repaired_by,
      });
    }
    const price = (units: number) =>
      formatUsd(priceMicros([{ meter: 'webhooks.delivery_16k', units, resourceId: '' }]));
    const units = items.reduce((sum, item) => sum + item.delivery_units, 0);
    const unrepaired = items.reduce((sum, item) => sum + (item.repaired_by === null ? item.delivery_units : 0), 0);
    return {
      items,
      delivery_units: units,
      total_usd: price(units),
      repaired_count: items.filter((item) => item.repaired_by !== null).length,
      unrepaired_delivery_units: unrepaired,
      unrepaired_total_usd: price(unrepaired),
    };
  }

  /**
   * The delivery to replay with its message, content, endpoint and the team's counters. The message row is
   * locked (FOR NO KEY UPDATE) so replays of one message take generations one after another and a redaction
   * cannot slip between the content check and the insert.
   */
  private async lockReplaySource(tx: EntityManager, teamId: string, id: string): Promise<ReplaySourceRow> {
    const owned: { message_id: string }[] = await tx.query(
      `SELECT message_id FROM deliveries WHERE id = $1 AND team_id = $2`,
      [id, teamId],
    );
    if (!owned[0]) throw notFound('delivery');
    await tx.query(`SELECT 1 FROM messages WHERE id = $1 FOR NO KEY UPDATE`, [owned[0].message_id]);
    return (await this.readReplaySources(tx, teamId, [id]))[0]!;
  }

  private async readReplaySources(
    db: EntityManager,
    teamId: string,
    ids: readonly string[],
  ): Promise<ReplaySourceRow[]> {
    return db.query(
      `SELECT d.id, d.team_id, d.tenant_id, d.message_id, d.endpoint_id, d.event_type, d.status, d.body,
              d.content_type, m.redacted_at, c.body AS content,
              message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days, t.deleted_at)
                AS retained_until,
              e.status AS endpoint_status, e.deleted_at IS NOT NULL AS endpoint_deleted, e.transform::text AS transform,
              (SELECT max(generation) FROM deliveries g
                WHERE g.message_id = d.message_id AND g.endpoint_id = d.endpoint_id) AS generation,
              (SELECT coalesce(sum(pending), 0) FROM team_queue_counts WHERE team_id = d.team_id) AS pending,
              (SELECT coalesce(sum(content_bytes), 0) FROM team_queue_counts WHERE team_id = d.team_id) AS content_bytes,
              ${repairedBySql('d')} AS repaired_by
         FROM deliveries d
         JOIN messages m ON m.id = d.message_id
         JOIN tenants t ON t.id = d.tenant_id
         JOIN endpoints e ON e.id = d.endpoint_id
         LEFT JOIN message_contents c ON c.message_id = d.message_id
         LEFT JOIN team_settings s ON s.team_id = d.team_id
        WHERE d.id = ANY($1::text[]) AND d.team_id = $2`,
      [ids, teamId],
    );
  }

  /** The endpoint's current transform over the original content; null when it has none (the content as is). */
  private currentTransform(source: ReplaySourceRow): Buffer | null {
    if (source.transform === null) return null;
    const rules = compileRules(null, source.transform);
    const content = source.content!;
    const failed = (message: string) =>
      new ServiceError('transform_failed', `the transform of endpoint ${source.endpoint_id} failed: ${message}`, {
        resourceId: source.endpoint_id,
      });
    if (!source.content_type.startsWith('application/json')) throw failed('only JSON bodies can be transformed');
    const text = content.toString('utf8');
    const result = rules.transform!.apply(text, parseStrict(text));
    if (!result.ok) throw failed(result.message);
    return Buffer.from(result.output, 'utf8');
  }

  private async readDelivery(db: EntityManager, teamId: string, id: string): Promise<DeliveryRecordRow> {
    const rows: DeliveryRecordRow[] = await db.query(
      `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.id = $2 AND d.team_id = $3`,
      [this.deps.clock.now(), id, teamId],
    );
    if (!rows[0]) throw notFound('delivery');
    return rows[0];
  }
}

/** Why a delivery cannot be replayed now, as the error the replay would answer; null when it can. */
function replayProblem(source: ReplaySourceRow, now: Date): ServiceError | null {
  if (!FINISHED.has(source.status) || source.status === 'canceled')
    return new ServiceError(
      'invalid_state',
      source.status === 'canceled'
        ? 'a canceled delivery cannot be replayed'
        : `a ${source.status} delivery is still pending: replay it once it has finished`,
    );
  if (source.endpoint_deleted) return new ServiceError('invalid_state', 'the endpoint was deleted');
  if (source.endpoint_status === 'disabled')
    return new ServiceError('invalid_state', 'the endpoint is disabled; resume it first');
  if (source.redacted_at !== null)
    return new ServiceError('payload_expired', 'the message was redacted: nothing can be replayed');
  if (source.content === null || source.retained_until <= now)
    return new ServiceError('payload_expired', 'the message content is past its retention');
  return null;
}

function displayStatus(row: { status: string; attempt_count: number; next_attempt_at: Date }, now: Date): string {
  return row.status === 'queued' && row.attempt_count === 0 && row.next_attempt_at > now ? 'scheduled' : row.status;
}
