import type { DataSource, EntityManager } from 'typeorm';
import { addMs, DAY, SECOND, type Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { notFound, ServiceError } from '../common/errors.js';
import { isWellFormedId, newId } from '../common/ids.js';
import {
  decodeCursor,
  encodeCursor,
  orderSql,
  parseLimit,
  rowsByRequest,
  withOrder,
  type ListScope,
  type Page,
} from '../common/paging.js';
import { reader } from '../common/transaction.js';
import type { ListOperationalEventsQuery } from './operational-event.inputs.js';
import {
  checkNewEvent,
  coalesceKeyOf,
  type NewOperationalEvent,
  type OperationalEventType,
} from './operational-event.types.js';
import {
  toOperationalEventView,
  type OperationalEventRow,
  type OperationalEventView,
} from './operational-event.view.js';

export type { NewOperationalEvent, OperationalEventType } from './operational-event.types.js';

/** Events are kept and listed for 30 days after their first occurrence. */
export const EVENT_RETENTION_MS = 30 * DAY;
/** An occurrence less than this long after an open event's first occurrence folds into it. */
export const COALESCE_WINDOW_MS = 60 * SECOND;

const COLUMNS = `id, type, created_at, resource_id, tenant_id, resource_version, data, coalesced, count, first_id, last_id`;

/**
 * One statement for the whole batch. `opened` inserts each group, or folds it into the open window of its team,
 * type and key (ON CONFLICT on the partial unique index takes the latest committed row, so concurrent emitters
 * of one burst fold into one event). A window found over is closed instead, and the outer INSERT stores the group
 * as a new event: the closed row's index entry no longer conflicts because this statement updated it.
 */
const EMIT_SQL = `
WITH batch AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[],
                       $8::int[], $9::text[], $10::text[])
    AS b(id, team_id, tenant_id, type, resource_id, resource_version, data, count, last_id, coalesce_key)
), opened AS (
  INSERT INTO operational_events AS e (id, team_id, tenant_id, type, resource_id, resource_version, data, coalesced,
    count, first_id, last_id, coalesce_key, window_ends_at, created_at, last_occurred_at)
  SELECT id, team_id, tenant_id, type, resource_id, resource_version, data, count > 1,
    count, resource_id, last_id, coalesce_key, $12::timestamptz, $11::timestamptz, $11::timestamptz
  FROM batch
  ON CONFLICT (team_id, type, coalesce_key) WHERE window_open DO UPDATE SET
    window_open = e.window_ends_at > EXCLUDED.created_at,
    coalesced = e.coalesced OR e.window_ends_at > EXCLUDED.created_at,
    count = CASE WHEN e.window_ends_at > EXCLUDED.created_at THEN e.count + EXCLUDED.count ELSE e.count END,
    last_id = CASE WHEN e.window_ends_at > EXCLUDED.created_at THEN EXCLUDED.last_id ELSE e.last_id END,
    last_occurred_at = CASE WHEN e.window_ends_at > EXCLUDED.created_at
                            THEN EXCLUDED.last_occurred_at ELSE e.last_occurred_at END,
    txid = CASE WHEN e.window_ends_at > EXCLUDED.created_at THEN pg_current_xact_id() ELSE e.txid END
  RETURNING e.team_id, e.type, e.coalesce_key, e.window_open
)
INSERT INTO operational_events (id, team_id, tenant_id, type, resource_id, resource_version, data, coalesced,
  count, first_id, last_id, coalesce_key, window_ends_at, created_at, last_occurred_at)
SELECT b.id, b.team_id, b.tenant_id, b.type, b.resource_id, b.resource_version, b.data, b.count > 1,
  b.count, b.resource_id, b.last_id, b.coalesce_key, $12::timestamptz, $11::timestamptz, $11::timestamptz
FROM batch b JOIN opened o USING (team_id, type, coalesce_key)
WHERE NOT o.window_open`;

interface Group {
  first: NewOperationalEvent;
  key: string;
  count: number;
  lastId: string;
}

/** A page position: the commit-ordered key (txid, id) of the last event shown. */
const POSITION = /^([0-9]{1,20}):(wdv_[0-9a-z]{26})$/;

export class OperationalEventService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  /**
   * Records events in the caller's transaction, one round trip for the whole batch. Occurrences of the same team,
   * type and coalescing key fold together (within the batch, and into an open window less than 60 seconds old).
   */
  async emit(tx: EntityManager, events: readonly NewOperationalEvent[]): Promise<void> {
    if (events.length === 0) return;
    const groups = new Map<string, Group>();
    for (const event of events) {
      checkNewEvent(event);
      const key = coalesceKeyOf(event);
      const groupKey = JSON.stringify([event.teamId, event.type, key]);
      const group = groups.get(groupKey);
      if (group) {
        group.count += 1;
        group.lastId = event.resourceId;
      } else groups.set(groupKey, { first: event, key, count: 1, lastId: event.resourceId });
    }
    // One order for every emitter, so two batches never wait on each other's windows in opposite orders.
    const ordered = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, group]) => group);
    const now = this.clock.now();
    await tx.query(EMIT_SQL, [
      ordered.map(() => newId('operationalEvent', this.clock)),
      ordered.map((g) => g.first.teamId),
      ordered.map((g) => g.first.tenantId),
      ordered.map((g) => g.first.type),
      ordered.map((g) => g.first.resourceId),
      ordered.map((g) => g.first.resourceVersion ?? '0'),
      ordered.map((g) => JSON.stringify(g.first.data)),
      ordered.map((g) => g.count),
      ordered.map((g) => g.lastId),
      ordered.map((g) => g.key),
      now,
      addMs(now, COALESCE_WINDOW_MS),
    ]);
  }

  /** GET /events/{id}: an event of the team from the last 30 days, else not_found. */
  async getEvent(ctx: CallContext, id: string): Promise<OperationalEventView> {
    if (!isWellFormedId(id, 'operationalEvent')) throw notFound('event');
    const rows: OperationalEventRow[] = await reader(this.db, ctx).query(
      `SELECT ${COLUMNS} FROM operational_events WHERE id = $1 AND team_id = $2 AND created_at > $3`,
      [id, ctx.actor.teamId, this.retentionCutoff()],
    );
    const row = rows[0];
    if (!row) throw notFound('event');
    return toOperationalEventView(row);
  }

  /**
   * GET /events: the last 30 days in commit order, paged by (txid, id). Only events written by transactions older
   * than every running one (txid below the snapshot's xmin) are listed, so an event committed late by a long
   * transaction appears after the position a poller has reached, never behind it. With `order` newest (an
   * extension) the same events are read from the other end, along the same index (operational_events_team_feed_idx),
   * and the list has an end: next_cursor is null on its last page.
   */
  async listEvents(ctx: CallContext, query: ListOperationalEventsQuery): Promise<Page<OperationalEventView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'events',
      filters: withOrder(
        { type: query.type ?? null, resource_id: query.resource_id ?? null, tenant_id: query.tenant_id ?? null },
        query.order,
      ),
    };
    const newest = query.order === 'newest';
    const order = orderSql(query.order);
    const after = decodeCursor(scope, query.cursor);
    const position = after === null ? null : POSITION.exec(after);
    if (after !== null && !position)
      throw new ServiceError('invalid_cursor', 'cursor is not a cursor of this list', { field: 'cursor' });
    // ORDER BY names the column: a bare `txid` would be the text rendering of the select list, sorted as text
    // (so 10 before 9) by a sort instead of along operational_events_team_feed_idx.
    const rows: (OperationalEventRow & { txid: string })[] = await reader(this.db, ctx).query(
      `SELECT ${COLUMNS}, txid::text AS txid FROM operational_events
        WHERE team_id = $1 AND created_at > $2
          AND txid < pg_snapshot_xmin(pg_current_snapshot())
          AND ($3::text IS NULL OR type = $3)
          AND ($4::text IS NULL OR tenant_id = $4)
          AND ($5::text IS NULL OR resource_id = $5 OR (coalesced AND last_id = $5))
          AND ($6::xid8 IS NULL OR (txid, id) ${order.after} ($6::xid8, $7::text))
        ORDER BY operational_events.txid ${order.direction}, id ${order.direction}
        LIMIT $8`,
      [
        ctx.actor.teamId,
        this.retentionCutoff(),
        query.type ?? null,
        query.tenant_id ?? null,
        query.resource_id ?? null,
        position?.[1] ?? null,
        position?.[2] ?? null,
        newest ? limit + 1 : limit,
      ],
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    // A feed: every non-empty page names its position, so a poller continues from the end later. Only an empty
    // page answers null (poll again with the same cursor). Newest first reads back to the oldest event and ends.
    const more = newest ? rows.length > limit : true;
    return {
      data: page.map(toOperationalEventView),
      nextCursor: last && more ? encodeCursor(scope, `${last.txid}:${last.id}`) : null,
    };
  }

  /**
   * The newest events of a type about each resource, newest first, no paging (the console's source page), for many
   * resources in one statement (GraphQL `Source.recentRejections` for a page of sources).
   */
  async recentEventsOfResources(
    ctx: CallContext,
    type: OperationalEventType,
    requests: readonly { resourceId: string; limit: number }[],
  ): Promise<OperationalEventView[][]> {
    if (requests.length === 0) return [];
    const rows: (OperationalEventRow & { ord: string })[] = await reader(this.db, ctx).query(
      `SELECT k.ord, x.* FROM unnest($3::text[], $5::int[]) WITH ORDINALITY AS k(resource_id, lim, ord)
        CROSS JOIN LATERAL (
          SELECT ${COLUMNS}, last_occurred_at AS sort_at FROM operational_events
           WHERE team_id = $1 AND type = $2 AND (resource_id = k.resource_id OR (coalesced AND last_id = k.resource_id))
             AND created_at > $4
           ORDER BY last_occurred_at DESC, id DESC
           LIMIT k.lim) x
        ORDER BY k.ord, x.sort_at DESC, x.id DESC`,
      [
        ctx.actor.teamId,
        type,
        requests.map((request) => request.resourceId),
        this.retentionCutoff(),
        requests.map((request) => Math.min(Math.max(1, request.limit), 200)),
      ],
    );
    return rowsByRequest(rows, requests.length).map((group) => group.map(toOperationalEventView));
  }

  /** Retention: deletes events past their 30 days in small batches (no long transaction). */
  async purgeExpired(batchSize = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const result: [unknown[], number] = await this.db.query(
        `DELETE FROM operational_events WHERE id IN (
           SELECT id FROM operational_events WHERE created_at <= $1 LIMIT $2)`,
        [this.retentionCutoff(), batchSize],
      );
      const deleted = result[1];
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }

  private retentionCutoff(): Date {
    return addMs(this.clock.now(), -EVENT_RETENTION_MS);
  }
}
