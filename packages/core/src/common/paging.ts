import { createHash } from 'node:crypto';
import { canonicalStringify } from '@svc/json';
import { ServiceError, invalidField } from './errors.js';

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface PageRequest {
  limit?: unknown;
  cursor?: unknown;
}

export interface ListScope {
  teamId: string;
  list: string;
  /** The filters of the list; a cursor only continues the same filters. */
  filters: Record<string, unknown>;
}

/**
 * The order of the support lists (messages, deliveries, operational events), an extension: `oldest` first is the
 * spec's and the default; `newest` first reads the same list from its end. A cursor continues only the order it was
 * made in (the order is part of its digest).
 */
export const LIST_ORDERS = ['oldest', 'newest'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];

/**
 * The filters a cursor is bound to, with the order when it is not the default: cursors of oldest-first pages stay
 * what they were, and one of a newest-first page continues nothing else.
 */
export function withOrder(filters: Record<string, unknown>, order: ListOrder | undefined): Record<string, unknown> {
  return order === 'newest' ? { ...filters, order } : filters;
}

/** The SQL of an order: the direction of ORDER BY and the comparison that continues after a page's last row. */
export function orderSql(order: ListOrder | undefined): { direction: 'ASC' | 'DESC'; after: '>' | '<' } {
  return order === 'newest' ? { direction: 'DESC', after: '<' } : { direction: 'ASC', after: '>' };
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/**
 * `limit` as sent: absent (or GraphQL's null) is the default; anything else must be an integer from 1 to 200 (the
 * spec), an empty `?limit=` included.
 */
export function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === null) return DEFAULT_LIMIT;
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^[0-9]{1,3}$/.test(text))
    throw invalidField('limit', 'limit must be an integer from 1 to 200');
  const limit = Number(text);
  if (limit < 1 || limit > MAX_LIMIT) throw invalidField('limit', 'limit must be an integer from 1 to 200');
  return limit;
}

function scopeDigest(scope: ListScope, window?: readonly [number, number]): string {
  const parts: unknown[] = [scope.teamId, scope.list, scope.filters];
  if (window) parts.push(window);
  return createHash('sha256').update(canonicalStringify(parts)).digest('base64url').slice(0, 22);
}

/** A cursor names the last item of a page and is bound to the team, the list and its filters. */
export function encodeCursor(scope: ListScope, afterId: string): string {
  return Buffer.from(JSON.stringify({ s: scopeDigest(scope), a: afterId })).toString('base64url');
}

export function decodeCursor(scope: ListScope, raw: unknown): string | null {
  const cursor = readCursor(raw);
  if (cursor === null) return null;
  if (cursor.w !== undefined || cursor.s !== scopeDigest(scope)) throw invalidCursor();
  return cursor.a;
}

/**
 * The cursor of a list with a time window also carries the window the first page resolved (milliseconds since the
 * epoch, after inclusive and before exclusive), so that the default "now" of `created_before` stays where it was
 * while the client pages; the digest covers it with the filters as sent.
 */
export function encodeWindowCursor(scope: ListScope, window: readonly [number, number], afterId: string): string {
  return Buffer.from(JSON.stringify({ s: scopeDigest(scope, window), w: window, a: afterId })).toString('base64url');
}

export function decodeWindowCursor(
  scope: ListScope,
  raw: unknown,
): { window: readonly [number, number]; afterId: string } | null {
  const cursor = readCursor(raw);
  if (cursor === null) return null;
  const w = cursor.w;
  if (
    !Array.isArray(w) ||
    w.length !== 2 ||
    !w.every((t) => Number.isSafeInteger(t)) ||
    cursor.s !== scopeDigest(scope, w as [number, number])
  )
    throw invalidCursor();
  return { window: w as [number, number], afterId: cursor.a };
}

export const invalidCursor = (): ServiceError =>
  new ServiceError('invalid_cursor', 'cursor is not a cursor of this list', { field: 'cursor' });

function readCursor(raw: unknown): { s: unknown; w: unknown; a: string } | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 512 || !/^[A-Za-z0-9_-]+$/.test(raw))
    throw invalidCursor();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (typeof decoded !== 'object' || decoded === null) throw invalidCursor();
  const { s, w, a } = decoded as { s?: unknown; w?: unknown; a?: unknown };
  if (typeof a !== 'string' || a.length > 200) throw invalidCursor();
  return { s, w, a };
}

/** Builds a page from rows fetched with limit + 1 so the presence of a next page is known without counting. */
export function toPage<R extends { id: string }, T>(
  scope: ListScope,
  rows: R[],
  limit: number,
  render: (row: R) => T,
): Page<T> {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { data: pageRows.map(render), nextCursor: more && last ? encodeCursor(scope, last.id) : null };
}

/**
 * One answer per request of a batch of pages (a nested list loaded for many parents in one statement): its page,
 * or the error of a request with a bad limit or cursor, which fails that request only.
 */
export type PageAnswer<T> = Page<T> | ServiceError;

/** Checks each request of a batch; a request that fails its check answers its ServiceError, anything else throws. */
export function checkEach<R, C>(requests: readonly R[], check: (request: R) => C): (C | ServiceError)[] {
  return requests.map((request) => {
    try {
      return check(request);
    } catch (error) {
      if (error instanceof ServiceError) return error;
      throw error;
    }
  });
}

/** The requests of a batch that passed their checks, in order. */
export function passed<C>(checked: readonly (C | ServiceError)[]): C[] {
  return checked.filter((entry): entry is C => !(entry instanceof ServiceError));
}

/** Splits the rows of a batched statement by the 1-based ordinal (`ord`) of the request each answers. */
export function rowsByRequest<R extends { ord: string | number }>(rows: readonly R[], requests: number): R[][] {
  const grouped: R[][] = Array.from({ length: requests }, () => []);
  for (const row of rows) grouped[Number(row.ord) - 1]?.push(row);
  return grouped;
}
