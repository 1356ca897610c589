import type { EntityManager } from 'typeorm';
import { DAY } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import {
  checkEach,
  decodeCursor,
  parseLimit,
  passed,
  rowsByRequest,
  toPage,
  type PageAnswer,
} from '../common/paging.js';
import { MAX_WINDOW_DAYS, openWindowedPage, windowedCursor } from '../common/window.js';
import { DELIVERY_COLUMNS } from './delivery-columns.js';
import { ATTEMPT_COLUMNS, attemptListScope, deliveryListScope } from './delivery-reads.js';
import { LEASE_JOIN } from './delivery-status.js';
import {
  toAttemptView,
  toDeliveryView,
  type AttemptRecordRow,
  type AttemptView,
  type DeliveryRecordRow,
  type DeliveryView,
} from './delivery.view.js';

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

/**
 * The deliveries of many messages, a page each, in one statement (GraphQL `Message.deliveries` for a page of
 * messages). Each page is the one GET /deliveries answers with `message_id` and the window of 30 days from the
 * message's creation (every delivery of a message is created within it), with the same cursors.
 */
export async function readDeliveryPagesOfMessages(
  db: EntityManager,
  teamId: string,
  requests: readonly MessageDeliveriesRequest[],
  now: Date,
): Promise<PageAnswer<DeliveryView>[]> {
  const checked = checkEach(requests, (request) => {
    const limit = parseLimit(request.limit);
    const query = {
      message_id: request.messageId,
      created_after: request.createdAt.toISOString(),
      created_before: new Date(request.createdAt.getTime() + MAX_WINDOW_DAYS * DAY).toISOString(),
      cursor: request.cursor,
    };
    const scope = deliveryListScope(teamId, query);
    return { messageId: request.messageId, limit, scope, ...openWindowedPage(scope, query, now, 'wdd_') };
  });
  const valid = passed(checked);
  const rows: (DeliveryRecordRow & { ord: string })[] =
    valid.length === 0
      ? []
      : await db.query(
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
            teamId,
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

/**
 * The attempts of many deliveries, a page each, in one statement (GraphQL `Delivery.attempts` for a page of
 * deliveries the caller has just read): each page and cursor is the one GET /deliveries/{id}/attempts answers.
 */
export async function readAttemptPagesOfDeliveries(
  db: EntityManager,
  teamId: string,
  requests: readonly DeliveryAttemptsRequest[],
  now: Date,
): Promise<PageAnswer<AttemptView>[]> {
  const checked = checkEach(requests, (request) => {
    const limit = parseLimit(request.limit);
    const scope = attemptListScope(teamId, request.deliveryId);
    return { deliveryId: request.deliveryId, limit, scope, after: decodeCursor(scope, request.cursor) };
  });
  const valid = passed(checked);
  const rows: (AttemptRecordRow & { ord: string })[] =
    valid.length === 0
      ? []
      : await db.query(
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
            teamId,
            valid.map((entry) => entry.deliveryId),
            now,
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
