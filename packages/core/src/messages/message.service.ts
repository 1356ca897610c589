import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { ServiceError, notFound } from '../common/errors.js';
import {
  MAX_LIMIT,
  orderSql,
  parseLimit,
  rowsByRequest,
  withOrder,
  type ListScope,
  type Page,
} from '../common/paging.js';
import { reader } from '../common/transaction.js';
import { openWindowedPage, windowedCursor } from '../common/window.js';
import { DELIVERY_FROM, shownStatusSql } from '../deliveries/delivery-status.js';
import { repairedCountSql } from '../deliveries/repairs.js';
import type { AdmissionOptions, AdmissionService } from './admission.service.js';
import type { CreateMessageInput, ListMessagesQuery } from './message.inputs.js';
import { emptyCounts, type DeliveryCounts } from './message-status.js';
import { toMessageView, type MessageRecord, type MessageView } from './message.view.js';

/**
 * A message with its effective retention (a shorter payload_retention_days applies at once), its original
 * deliveries' counts by the status they show ($3 is now) and how many of them a replay repaired.
 */
const MESSAGE_SELECT = `
  SELECT m.id, m.tenant_id, m.event_type, m.external_id, m.origin, m.source_id, m.content_type, m.body_bytes,
         m.body_sha256, m.deliver_at, m.expires_at,
         message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days, t.deleted_at)
           AS retained_until,
         m.redacted_at, m.redaction_status, m.content_erased_at IS NULL AS content_available, m.metadata,
         m.ingest_units, m.delivery_units, m.price_micros, m.rate_version, m.created_at,
         (SELECT json_object_agg(x.status, x.n) FROM (
            SELECT ${shownStatusSql('$3')} AS status, count(*) AS n
              FROM ${DELIVERY_FROM} WHERE d.message_id = m.id AND d.generation = 0 GROUP BY 1) x) AS counts,
         ${repairedCountSql('m')} AS repaired_count
    FROM messages m
    JOIN tenants t ON t.id = m.tenant_id
    LEFT JOIN team_settings s ON s.team_id = m.team_id`;

export interface MessageServiceDeps {
  db: DataSource;
  clock: Clock;
  admission: AdmissionService;
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
  body_sha256: string | null;
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
  repaired_count: number;
}

/**
 * Messages: reads, and admission inside a transaction the caller holds (endpoint tests, source captures; the
 * transports' own admissions go through AdmissionService's batches).
 */
export class MessageService {
  constructor(private readonly deps: MessageServiceDeps) {}

  /**
   * Admits one message in the caller's transaction (the one holding its idempotency key or event key), or in one of
   * its own: everything is stored when the transaction commits, or nothing.
   */
  async admitMessage(ctx: CallContext, input: CreateMessageInput, options: AdmissionOptions): Promise<MessageView> {
    const request = { actor: ctx.actor, input, options };
    if (ctx.tx) return this.deps.admission.admitInTransaction(ctx.tx, request);
    return this.deps.db.transaction((tx) => this.deps.admission.admitInTransaction(tx, request));
  }

  async getMessage(ctx: CallContext, id: string): Promise<MessageView> {
    const now = this.deps.clock.now();
    const rows: MessageRow[] = await reader(this.deps.db, ctx).query(
      `${MESSAGE_SELECT} WHERE m.id = $1 AND m.team_id = $2`,
      [id, ctx.actor.teamId, now],
    );
    const row = rows[0];
    if (!row) throw notFound('message');
    return toMessageView(toRecord(row), { ...emptyCounts(), ...(row.counts ?? {}) }, now, row.repaired_count);
  }

  /**
   * GET /messages: oldest first within the window (newest first with `order`), paged by (created_at, id) either way
   * along messages_team_created_idx, one round trip. The status filter applies within each page (status is derived
   * from the deliveries): a page may be short while next_cursor is set.
   */
  async listMessages(ctx: CallContext, query: ListMessagesQuery): Promise<Page<MessageView>> {
    const now = this.deps.clock.now();
    const limit = parseLimit(query.limit);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'messages',
      filters: withOrder(
        {
          created_after: query.created_after ?? null,
          created_before: query.created_before ?? null,
          tenant_id: query.tenant_id ?? null,
          event_type: query.event_type ?? null,
          source_id: query.source_id ?? null,
          status: query.status ?? null,
          external_id: query.external_id ?? null,
        },
        query.order,
      ),
    };
    const { window, position } = openWindowedPage(scope, query, now, 'wdm_');
    const order = orderSql(query.order);
    const rows: MessageRow[] = await reader(this.deps.db, ctx).query(
      `${MESSAGE_SELECT}
        WHERE m.team_id = $2 AND m.created_at >= $4 AND m.created_at < $5
          AND ($6::text IS NULL OR m.tenant_id = $6)
          AND ($7::text IS NULL OR m.event_type = $7)
          AND ($8::text IS NULL OR m.source_id = $8)
          AND ($9::text IS NULL OR m.external_id = $9)
          AND ($10::timestamptz IS NULL OR (m.created_at, m.id) ${order.after} ($10::timestamptz, $1::text))
        ORDER BY m.created_at ${order.direction}, m.id ${order.direction}
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
      .map((row) => toMessageView(toRecord(row), { ...emptyCounts(), ...(row.counts ?? {}) }, now, row.repaired_count))
      .filter((view) => query.status === undefined || view.status === query.status);
    return {
      data: views,
      nextCursor: more && last ? windowedCursor(scope, window, last) : null,
    };
  }

  /**
   * The newest messages each source captured, newest first, no paging (the console's source page), for many
   * sources in one statement (GraphQL `Source.recentMessages` for a page of sources).
   */
  async recentCapturesOfSources(
    ctx: CallContext,
    requests: readonly { sourceId: string; limit: number }[],
  ): Promise<MessageView[][]> {
    if (requests.length === 0) return [];
    const now = this.deps.clock.now();
    const rows: (MessageRow & { ord: string })[] = await reader(this.deps.db, ctx).query(
      `SELECT k.ord, c.* FROM unnest($1::text[], $4::int[]) WITH ORDINALITY AS k(source_id, lim, ord)
        CROSS JOIN LATERAL (
          ${MESSAGE_SELECT} WHERE m.source_id = k.source_id AND m.team_id = $2
           ORDER BY m.created_at DESC, m.id DESC LIMIT k.lim) c
        ORDER BY k.ord, c.created_at DESC, c.id DESC`,
      [
        requests.map((request) => request.sourceId),
        ctx.actor.teamId,
        now,
        requests.map((request) => Math.min(Math.max(1, request.limit), MAX_LIMIT)),
      ],
    );
    return rowsByRequest(rows, requests.length).map((group) =>
      group.map((row) =>
        toMessageView(toRecord(row), { ...emptyCounts(), ...(row.counts ?? {}) }, now, row.repaired_count),
      ),
    );
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
