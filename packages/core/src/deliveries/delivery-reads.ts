import type { EntityManager } from 'typeorm';
import { notFound } from '../common/errors.js';
import { decodeCursor, orderSql, parseLimit, toPage, withOrder, type ListScope, type Page } from '../common/paging.js';
import { openWindowedPage, windowedCursor } from '../common/window.js';
import { DELIVERY_COLUMNS } from './delivery-columns.js';
import { checkDeliveryListPairings, latestGenerationSql } from './delivery-list-filters.js';
import { DELIVERY_FROM, LEASE_JOIN, shownStatusSql } from './delivery-status.js';
import type { ListAttemptsQuery, ListDeliveriesQuery } from './delivery.inputs.js';
import {
  toAttemptView,
  toDeliveryView,
  type AttemptRecordRow,
  type AttemptView,
  type DeliveryRecordRow,
  type DeliveryView,
} from './delivery.view.js';
import { repairedBySql } from './repairs.js';

/** An attempt as the API shows it; the response body only within the team's response retention ($3 is now). */
export const ATTEMPT_COLUMNS = `
  a.id, a.delivery_id, a.endpoint_id, a.number, a.trigger, a.started_at, a.duration_ms, a.url_revision,
  a.status_code, a.error_kind, a.error_detail,
  CASE WHEN a.created_at > $3::timestamptz - make_interval(days => coalesce(s.response_retention_days, 7))
       THEN a.response_body END AS response_body,
  a.created_at`;

/** What a cursor of GET /deliveries is bound to: the team and the filters as sent (the window parameters too). */
export function deliveryListScope(teamId: string, query: Omit<ListDeliveriesQuery, 'limit' | 'cursor'>): ListScope {
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
export function attemptListScope(teamId: string, deliveryId: string): ListScope {
  return { teamId, list: 'attempts', filters: { delivery_id: deliveryId } };
}

/** One delivery of the team as the API shows it; not_found otherwise. */
export async function readDeliveryRecord(
  db: EntityManager,
  teamId: string,
  id: string,
  now: Date,
): Promise<DeliveryRecordRow> {
  const rows: DeliveryRecordRow[] = await db.query(
    `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.id = $2 AND d.team_id = $3`,
    [now, id, teamId],
  );
  if (!rows[0]) throw notFound('delivery');
  return rows[0];
}

/**
 * GET /deliveries: oldest first within the window (newest first with `order`), paged by (created_at, id) either way
 * along the team's (created_at, id) index: deliveries_team_created_idx, or for dead letters (failed, expired) that of
 * delivery_dead_letters, which its triggers keep (prisma-free-schema/0044_dead_letters.sql).
 */
export async function readDeliveryPage(
  db: EntityManager,
  teamId: string,
  query: ListDeliveriesQuery,
  now: Date,
): Promise<Page<DeliveryView>> {
  const limit = parseLimit(query.limit);
  checkDeliveryListPairings(query);
  const scope = deliveryListScope(teamId, query);
  const { window, position } = openWindowedPage(scope, query, now, 'wdd_');
  const deadLetters = query.status === 'failed' || query.status === 'expired';
  const order = orderSql(query.order);
  // k: the table whose (team_id, created_at, id) index the page walks.
  const [from, k] = deadLetters
    ? [`delivery_dead_letters k JOIN deliveries d ON d.id = k.id ${LEASE_JOIN}`, 'k']
    : [DELIVERY_FROM, 'd'];
  const rows: DeliveryRecordRow[] = await db.query(
    `SELECT ${DELIVERY_COLUMNS} FROM ${from}
      WHERE ${k}.team_id = $2 AND ${k}.created_at >= $3 AND ${k}.created_at < $4
        AND ($5::text IS NULL OR ${shownStatusSql('$1')} = $5)
        AND ($6::text IS NULL OR d.message_id = $6)
        AND ($7::text IS NULL OR d.endpoint_id = $7)
        AND ($8::text IS NULL OR d.tenant_id = $8)
        AND ($9::text IS NULL OR d.event_type = $9)
        AND ($10::text IS NULL OR ($10 = 'original') = (d.generation = 0))
        AND ($11::timestamptz IS NULL OR (${k}.created_at, ${k}.id) ${order.after} ($11::timestamptz, $12::text))
        AND ($14::boolean IS NULL OR ((${repairedBySql('d')}) IS NOT NULL) = $14)
        AND ($15::bigint IS NULL OR d.sequence = $15)
        ${query.latest_generation ? `AND NOT EXISTS (${latestGenerationSql('d')})` : ''}
      ORDER BY ${k}.created_at ${order.direction}, ${k}.id ${order.direction}
      LIMIT $13`,
    [
      now,
      teamId,
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

/**
 * GET /deliveries/{id}/attempts: oldest first. Response bodies show only while the team's
 * response_retention_days has not passed (the sweep erases them; a shorter setting hides them at once).
 */
export async function readAttemptPage(
  db: EntityManager,
  teamId: string,
  deliveryId: string,
  query: ListAttemptsQuery,
  now: Date,
): Promise<Page<AttemptView>> {
  // The request's fields before the lookup, as on every list (docs/api-choices.md, the order of the common checks).
  const limit = parseLimit(query.limit);
  const scope = attemptListScope(teamId, deliveryId);
  const after = decodeCursor(scope, query.cursor);
  await readDeliveryRecord(db, teamId, deliveryId, now);
  const rows: AttemptRecordRow[] = await db.query(
    `SELECT ${ATTEMPT_COLUMNS}
       FROM attempts a LEFT JOIN team_settings s ON s.team_id = a.team_id
      WHERE a.delivery_id = $1 AND a.team_id = $2 AND ($4::text IS NULL OR a.id > $4)
      ORDER BY a.id
      LIMIT $5`,
    [deliveryId, teamId, now, after, limit + 1],
  );
  return toPage(scope, rows, limit, toAttemptView);
}
