import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { unitsFor, priceMicros, type BillingService, type ChargeItem } from '../billing/billing.service.js';
import { RATE_VERSION } from '../catalog/catalog.js';
import { admissionFactSql } from '../analytics/analytics-facts.js';
import type { Limits } from '../catalog/limits.js';
import { addMs, DAY, HOUR, type Clock } from '../common/clock.js';
import type { Actor, CallContext } from '../common/context.js';
import { ServiceError, invalidField, notFound } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, encodeCursor, MAX_LIMIT, parseLimit, type ListScope, type Page } from '../common/paging.js';
import { reader } from '../common/transaction.js';
import { decodePosition, encodePosition, parseWindow } from '../common/window.js';
import { DELIVERY_WAKE_CHANNEL, wakePayload } from '../deliveries/delivery.jobs.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { acceptBody, type MessageBody } from './message-body.js';
import type { CreateMessageInput, ListMessagesQuery } from './message.inputs.js';
import { emptyCounts, type DeliveryCounts } from './message-status.js';
import { matchEndpoints, type CandidateEndpoint, type MatchedDelivery, type RuleCache } from './matching.js';
import { toMessageView, type MessageRecord, type MessageView } from './message.view.js';

/**
 * A message with its effective retention (a shorter payload_retention_days applies at once) and its original
 * deliveries' counts ($3 is now: a queued delivery not yet due and never attempted counts as scheduled).
 */
const MESSAGE_SELECT = `
  SELECT m.id, m.tenant_id, m.event_type, m.external_id, m.origin, m.source_id, m.content_type, m.body_bytes,
         m.body_sha256, m.deliver_at, m.expires_at,
         message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days, t.deleted_at)
           AS retained_until,
         m.redacted_at, m.redaction_status, m.content_erased_at IS NULL AS content_available, m.metadata,
         m.ingest_units, m.delivery_units, m.price_micros, m.rate_version, m.created_at,
         (SELECT json_object_agg(x.status, x.n) FROM (
            SELECT CASE WHEN d.status = 'queued' AND d.attempt_count = 0 AND d.next_attempt_at > $3
                        THEN 'scheduled' ELSE d.status END AS status, count(*) AS n
              FROM deliveries d WHERE d.message_id = m.id AND d.generation = 0 GROUP BY 1) x) AS counts
    FROM messages m
    JOIN tenants t ON t.id = m.tenant_id
    LEFT JOIN team_settings s ON s.team_id = m.team_id`;

/** The analytics fact of an admission, in insertMessage's placeholders. */
const ADMISSION_FACT = admissionFactSql({
  teamId: '$2',
  tenantId: '$3',
  sourceId: '$7',
  at: '$20',
  bodyBytes: '$9',
  deliveries: '$28',
  fanout: '$30::text[]',
});

/** At most this many messages of one team are being stored at once (the spec's 4). */
export const ADMISSION_SLOTS = 4;

export interface MessageServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  jobs: JobQueue;
  billing: BillingService;
}

/** Who publishes: the origin the message records and, for an endpoint test, the one endpoint it goes to. */
export interface AdmissionOptions {
  origin: 'api' | 'test' | 'source';
  sourceId?: string | null;
  /** Endpoint tests: deliver to this endpoint only, skipping its event types, filter and transform. */
  testEndpointId?: string;
  /** Whose key pays (sources: their billing key). Default: the caller. */
  payer?: Actor;
  /** Sources: the captured bytes as received (the input then has neither payload nor body_base64). */
  body?: MessageBody;
  /** Sources: the message's ID, chosen before admission so that the capture's event-key claim names it at once. */
  messageId?: string;
}

interface AdmissionContext {
  tenant_status: string | null;
  event_type_archived: boolean | null;
  pending: string;
  content_bytes: string;
  retention_days: number | null;
  slot: number | null;
  endpoints: CandidateEndpoint[];
}

interface MessageRow {
  id: string;
  tenant_id: string;
  event_type: string;
  external_id: string | null;
  origin: 'api' | 'test' | 'source';
  source_id: string | null;
  content_type: string;
  body_bytes: number;
  body_sha256: string;
  deliver_at: Date;
  expires_at: Date;
  retained_until: Date;
  redacted_at: Date | null;
  redaction_status: 'redacting' | 'complete' | null;
  content_available: boolean;
  metadata: Record<string, string>;
  ingest_units: number;
  delivery_units: number;
  price_micros: string;
  rate_version: string;
  created_at: Date;
  counts: Partial<DeliveryCounts> | null;
}

/**
 * Messages: admission (POST /messages, endpoint tests, source captures) and reads. Admission runs in the
 * caller's transaction (the one holding the idempotency key) and writes everything at once: the message, its
 * content, one delivery per matched endpoint with its frozen bytes, the queue counters, the delivery jobs and the
 * charge. Plain SQL: this is the hot path, and each step is one round trip whatever the fan-out.
 */
export class MessageService {
  private readonly rules: RuleCache = new Map();

  constructor(private readonly deps: MessageServiceDeps) {}

  async admitMessage(ctx: CallContext, input: CreateMessageInput, options: AdmissionOptions): Promise<MessageView> {
    const tx = ctx.tx;
    if (!tx) return this.deps.db.transaction((own) => this.admitMessage({ ...ctx, tx: own }, input, options));
    const { clock, limits } = this.deps;
    const now = clock.now();
    const body = options.body ?? acceptBody(input);
    const { deliverAt, expiresAt } = this.window(input, now);
    const teamId = ctx.actor.teamId;

    const context = await this.loadContext(tx, teamId, input, options);
    if (context.slot === null)
      throw new ServiceError(
        'too_many_concurrent_requests',
        `at most ${ADMISSION_SLOTS} messages of a team are stored at once; retry after the time in Retry-After`,
        { retryAfter: 1 },
      );
    if (context.tenant_status !== 'active')
      throw new ServiceError('invalid_field', 'tenant must be an active tenant', { field: 'tenant_id' });
    if (options.origin !== 'test' && context.event_type_archived !== false)
      throw new ServiceError('invalid_event_type', `event type ${input.event_type} is not active in the catalog`, {
        field: 'event_type',
      });

    const deliveries = options.testEndpointId
      ? this.testDelivery(context.endpoints, options.testEndpointId, body)
      : matchEndpoints({
          endpoints: context.endpoints,
          requested: input.endpoint_ids ?? null,
          tenantId: input.tenant_id,
          eventType: input.event_type,
          body,
          cache: this.rules,
        });
    this.checkFanout(deliveries, input);
    const storedBytes = body.bytes.length + deliveries.reduce((sum, d) => sum + (d.body?.length ?? 0), 0);
    if (BigInt(context.pending) + BigInt(deliveries.length) > BigInt(limits.max_pending_deliveries.value))
      throw new ServiceError('queue_full', 'the team has reached its limit of pending deliveries', { retryAfter: 5 });
    if (BigInt(context.content_bytes) + BigInt(storedBytes) > BigInt(limits.max_content_bytes.value))
      throw new ServiceError('queue_full', 'the team has reached its limit of stored content', { retryAfter: 5 });

    const messageId = options.messageId ?? newId('message', clock);
    const retainedUntil = new Date(
      Math.max(addMs(now, (context.retention_days ?? 30) * DAY).getTime(), expiresAt.getTime()),
    );
    const ingestUnits = unitsFor(body.bytes.length, 'webhooks.ingest_64k');
    const deliveryUnits = deliveries.reduce((sum, d) => sum + d.units, 0);
    const charges: ChargeItem[] = [{ meter: 'webhooks.ingest_64k', units: ingestUnits, resourceId: messageId }];
    if (deliveryUnits > 0)
      charges.push({ meter: 'webhooks.delivery_16k', units: deliveryUnits, resourceId: messageId });
    const ids = deliveries.map(() => newId('delivery', clock));
    const record: MessageRecord = {
      id: messageId,
      tenantId: input.tenant_id,
      eventType: input.event_type,
      externalId: input.external_id ?? null,
      origin: options.origin,
      sourceId: options.sourceId ?? null,
      contentType: body.contentType,
      bodyBytes: body.bytes.length,
      bodySha256: createHash('sha256').update(body.bytes).digest('hex'),
      deliverAt,
      expiresAt,
      retainedUntil,
      redactedAt: null,
      redactionStatus: null,
      contentAvailable: true,
      metadata: input.metadata,
      ingestUnits,
      deliveryUnits,
      priceMicros: priceMicros(charges),
      rateVersion: RATE_VERSION,
      createdAt: now,
    };
    const payer = options.payer ?? ctx.actor;
    await this.insertMessage(tx, teamId, record, body, deliveries, ids, context.slot, storedBytes, payer.keyId, now);
    // Last: the spend row stays locked only from here to the commit.
    await this.deps.billing.charge(tx, payer, charges);
    const counts = emptyCounts();
    counts[deliverAt > now ? 'scheduled' : 'queued'] = deliveries.length;
    return toMessageView(record, counts, now);
  }

  async getMessage(ctx: CallContext, id: string): Promise<MessageView> {
    const now = this.deps.clock.now();
    const rows: MessageRow[] = await reader(this.deps.db, ctx).query(
      `${MESSAGE_SELECT} WHERE m.id = $1 AND m.team_id = $2`,
      [id, ctx.actor.teamId, now],
    );
    const row = rows[0];
    if (!row) throw notFound('message');
    return toMessageView(toRecord(row), { ...emptyCounts(), ...(row.counts ?? {}) }, now);
  }

  /**
   * GET /messages: oldest first within the window, paged by (created_at, id), one round trip. The status filter
   * applies within each page (status is derived from the deliveries): a page may be short while next_cursor is set.
   */
  async listMessages(ctx: CallContext, query: ListMessagesQuery): Promise<Page<MessageView>> {
    const now = this.deps.clock.now();
    const limit = parseLimit(query.limit);
    const window = parseWindow(query, now);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'messages',
      filters: {
        after: window.after.toISOString(),
        before: window.before.toISOString(),
        tenant_id: query.tenant_id ?? null,
        event_type: query.event_type ?? null,
        source_id: query.source_id ?? null,
        status: query.status ?? null,
        external_id: query.external_id ?? null,
      },
    };
    const position = decodePosition(decodeCursor(scope, query.cursor), 'wdm_');
    const rows: MessageRow[] = await reader(this.deps.db, ctx).query(
      `${MESSAGE_SELECT}
        WHERE m.team_id = $2 AND m.created_at >= $4 AND m.created_at < $5
          AND ($6::text IS NULL OR m.tenant_id = $6)
          AND ($7::text IS NULL OR m.event_type = $7)
          AND ($8::text IS NULL OR m.source_id = $8)
          AND ($9::text IS NULL OR m.external_id = $9)
          AND ($10::timestamptz IS NULL OR (m.created_at, m.id) > ($10::timestamptz, $1::text))
        ORDER BY m.created_at, m.id
        LIMIT $11`,
      [
        position?.id ?? null,
        ctx.actor.teamId,
        now,
        window.after,
        window.before,
        query.tenant_id ?? null,
        query.event_type ?? null,
        query.source_id ?? null,
        query.external_id ?? null,
        position?.createdAt ?? null,
        limit + 1,
      ],
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const views = page
      .map((row) => toMessageView(toRecord(row), { ...emptyCounts(), ...(row.counts ?? {}) }, now))
      .filter((view) => query.status === undefined || view.status === query.status);
    return {
      data: views,
      nextCursor: more && last ? encodeCursor(scope, encodePosition(last.created_at, last.id)) : null,
    };
  }

  /** The newest messages a source captured, newest first (the console's source page); no paging. */
  async recentCaptures(ctx: CallContext, sourceId: string, limit: number): Promise<MessageView[]> {
    const now = this.deps.clock.now();
    const rows: MessageRow[] = await reader(this.deps.db, ctx).query(
      `${MESSAGE_SELECT} WHERE m.source_id = $1 AND m.team_id = $2 ORDER BY m.created_at DESC, m.id DESC LIMIT $4`,
      [sourceId, ctx.actor.teamId, now, Math.min(Math.max(1, limit), MAX_LIMIT)],
    );
    return rows.map((row) => toMessageView(toRecord(row), { ...emptyCounts(), ...(row.counts ?? {}) }, now));
  }

  /**
   * GET /messages/{id}/content: the accepted bytes and their content type, until redaction or retained_until;
   * 410 payload_expired afterwards (the metadata stays readable).
   */
  async getContent(ctx: CallContext, id: string): Promise<{ contentType: string; body: Buffer }> {
    const now = this.deps.clock.now();
    const rows: { content_type: string; body: Buffer | null; redacted_at: Date | null; retained_until: Date }[] =
      await reader(this.deps.db, ctx).query(
        `SELECT m.content_type, c.body, m.redacted_at,
                message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days, t.deleted_at)
                  AS retained_until
           FROM messages m
           JOIN tenants t ON t.id = m.tenant_id
           LEFT JOIN message_contents c ON c.message_id = m.id
           LEFT JOIN team_settings s ON s.team_id = m.team_id
          WHERE m.id = $1 AND m.team_id = $2`,
        [id, ctx.actor.teamId],
      );
    const row = rows[0];
    if (!row) throw notFound('message');
    if (row.redacted_at !== null)
      throw new ServiceError('payload_expired', 'the message was redacted: its content is gone (metadata stays)');
    if (row.body === null || row.retained_until <= now)
      throw new ServiceError('payload_expired', 'the message content is past its retention (metadata stays)');
    return { contentType: row.content_type, body: row.body };
  }

  /** deliver_at at most 7 days ahead; expires_at after it and at most 72 hours later (the default). */
  private window(input: CreateMessageInput, now: Date): { deliverAt: Date; expiresAt: Date } {
    const { limits } = this.deps;
    const deliverAt = input.deliver_at ? new Date(input.deliver_at) : now;
    if (deliverAt.getTime() > addMs(now, limits.max_schedule_days.value * DAY).getTime())
      throw invalidField('deliver_at', `deliver_at is at most ${limits.max_schedule_days.value} days ahead`);
    const windowMs = limits.delivery_window_hours.value * HOUR;
    const expiresAt = input.expires_at ? new Date(input.expires_at) : addMs(deliverAt, windowMs);
    if (expiresAt <= deliverAt) throw invalidField('expires_at', 'expires_at must be after deliver_at');
    if (expiresAt.getTime() > deliverAt.getTime() + windowMs)
      throw invalidField(
        'expires_at',
        `expires_at is at most ${limits.delivery_window_hours.value} hours after deliver_at`,
      );
    if (expiresAt <= now) throw invalidField('expires_at', 'expires_at is in the past: no attempt could start');
    return { deliverAt, expiresAt };
  }

  /**
   * One round trip: the tenant, the event type, the team's queue counters and retention, an admission slot (a
   * transaction-scoped advisory lock, at most 4 per team) and the candidate endpoints with their rules.
   */
  private async loadContext(
    tx: EntityManager,
    teamId: string,
    input: CreateMessageInput,
    options: AdmissionOptions,
  ): Promise<AdmissionContext> {
    const requested = options.testEndpointId ? [options.testEndpointId] : (input.endpoint_ids ?? null);
    const rows: AdmissionContext[] = await tx.query(
      `SELECT (SELECT status FROM tenants WHERE id = $2 AND team_id = $1) AS tenant_status,
              (SELECT archived FROM event_types WHERE team_id = $1 AND name = $3) AS event_type_archived,
              (SELECT coalesce(sum(pending), 0) FROM team_queue_counts WHERE team_id = $1) AS pending,
              (SELECT coalesce(sum(content_bytes), 0) FROM team_queue_counts WHERE team_id = $1) AS content_bytes,
              (SELECT payload_retention_days FROM team_settings WHERE team_id = $1) AS retention_days,
              (SELECT slot FROM generate_series(0, $4::int - 1) AS slot
                WHERE pg_try_advisory_xact_lock(hashtextextended('admission:' || $1, slot)) LIMIT 1) AS slot,
              (SELECT coalesce(json_agg(json_build_object(
                        'id', e.id, 'tenant_id', e.tenant_id, 'status', e.status, 'deleted', e.deleted_at IS NOT NULL,
                        'events', e.events, 'filter', e.filter, 'transform', e.transform,
                        'rules_version', e.version) ORDER BY e.id), '[]'::json)
                 FROM endpoints e
                WHERE e.team_id = $1
                  AND (CASE WHEN $5::text[] IS NULL THEN e.tenant_id = $2 AND e.deleted_at IS NULL
                            ELSE e.id = ANY($5::text[]) END)) AS endpoints`,
      [teamId, input.tenant_id, input.event_type, ADMISSION_SLOTS, requested],
    );
    return rows[0]!;
  }

  private testDelivery(endpoints: CandidateEndpoint[], endpointId: string, body: MessageBody): MatchedDelivery[] {
    const endpoint = endpoints.find((e) => e.id === endpointId && !e.deleted);
    if (!endpoint) throw notFound('endpoint');
    if (endpoint.status !== 'enabled')
      throw new ServiceError('invalid_state', `a ${endpoint.status} endpoint cannot be tested`);
    return [
      {
        endpointId,
        body: null,
        bodyBytes: body.bytes.length,
        units: unitsFor(body.bytes.length, 'webhooks.delivery_16k'),
      },
    ];
  }

  private checkFanout(deliveries: MatchedDelivery[], input: CreateMessageInput): void {
    const { limits } = this.deps;
    const field = input.endpoint_ids ? 'endpoint_ids' : 'tenant_id';
    if (deliveries.length > limits.max_fanout_endpoints.value)
      throw invalidField(field, `the message matches more than ${limits.max_fanout_endpoints.value} endpoints`);
    const total = deliveries.reduce((sum, d) => sum + d.bodyBytes, 0);
    if (total > limits.max_transformed_bytes_per_message.value)
      throw invalidField(field, 'the bodies for all matched endpoints exceed 8 MiB in all');
  }

  /** One statement: message, content, deliveries, the endpoints' and the team's queue counters, the analytics fact. */
  private async insertMessage(
    tx: EntityManager,
    teamId: string,
    m: MessageRecord,
    body: MessageBody,
    deliveries: MatchedDelivery[],
    ids: string[],
    slot: number,
    storedBytes: number,
    payingKeyId: string,
    now: Date,
  ): Promise<void> {
    await tx.query(
      `WITH message AS (
         INSERT INTO messages (id, team_id, tenant_id, event_type, external_id, origin, source_id, content_type,
                               body_bytes, body_sha256, deliver_at, expires_at, retained_until, metadata,
                               paying_key_id, ingest_units, delivery_units, price_micros, rate_version, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)),
       content AS (INSERT INTO message_contents (message_id, team_id, body) VALUES ($1, $2, $21)),
       delivery AS (
         INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                                 expires_at, body, body_bytes, content_type, delivery_units, created_at, updated_at)
         SELECT x.id, $2, $3, $1, x.endpoint_id, $4, 'queued', $11, $12, x.body, x.body_bytes, $8, x.units, $20, $20
           FROM unnest($22::text[], $23::text[], $24::bytea[], $25::int[], $26::int[])
                AS x(id, endpoint_id, body, body_bytes, units)),
       endpoint_counts AS (
         INSERT INTO endpoint_queue_counts AS q (endpoint_id, shard, pending)
         SELECT x.id, $27, 1 FROM unnest($30::text[]) WITH ORDINALITY AS x(id, i) ORDER BY x.i
         ON CONFLICT (endpoint_id, shard) DO UPDATE SET pending = q.pending + 1),
       team_counts AS (
         INSERT INTO team_queue_counts AS t (team_id, shard, pending, content_bytes) VALUES ($2, $27, $28, $29)
         ON CONFLICT (team_id, shard) DO UPDATE
           SET pending = t.pending + EXCLUDED.pending, content_bytes = t.content_bytes + EXCLUDED.content_bytes),
       queue AS (
         INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at)
         SELECT x.id, x.endpoint_id, $11, $12 FROM unnest($22::text[], $23::text[]) AS x(id, endpoint_id)),
       facts AS (${ADMISSION_FACT}),
       -- Wakes the endpoints' owners when the transaction commits.
       wake AS (SELECT pg_notify('${DELIVERY_WAKE_CHANNEL}', $31))
       SELECT 1 FROM wake`,
      [
        m.id,
        teamId,
        m.tenantId,
        m.eventType,
        m.externalId,
        m.origin,
        m.sourceId,
        m.contentType,
        m.bodyBytes,
        m.bodySha256,
        m.deliverAt,
        m.expiresAt,
        m.retainedUntil,
        JSON.stringify(m.metadata),
        payingKeyId,
        m.ingestUnits,
        m.deliveryUnits,
        m.priceMicros.toString(),
        m.rateVersion,
        now,
        body.bytes,
        ids,
        deliveries.map((d) => d.endpointId),
        deliveries.map((d) => d.body),
        deliveries.map((d) => d.bodyBytes),
        deliveries.map((d) => d.units),
        slot,
        deliveries.length,
        storedBytes,
        // Counter rows in ID order, like settlement, so the two never deadlock.
        deliveries.map((d) => d.endpointId).sort(),
        wakePayload(deliveries.map((d) => d.endpointId)),
      ],
    );
  }
}

function toRecord(row: MessageRow): MessageRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    eventType: row.event_type,
    externalId: row.external_id,
    origin: row.origin,
    sourceId: row.source_id,
    contentType: row.content_type,
    bodyBytes: row.body_bytes,
    bodySha256: row.body_sha256,
    deliverAt: row.deliver_at,
    expiresAt: row.expires_at,
    retainedUntil: row.retained_until,
    redactedAt: row.redacted_at,
    redactionStatus: row.redaction_status,
    contentAvailable: row.content_available,
    metadata: row.metadata,
    ingestUnits: row.ingest_units,
    deliveryUnits: row.delivery_units,
    priceMicros: BigInt(row.price_micros),
    rateVersion: row.rate_version,
    createdAt: row.created_at,
  };
}
