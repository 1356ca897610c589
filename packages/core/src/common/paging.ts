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

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_LIMIT;
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^[0-9]{1,3}$/.test(text))
    throw invalidField('limit', 'limit must be an integer from 1 to 200');
  const limit = Number(text);
  if (limit < 1 || limit > MAX_LIMIT) throw invalidField('limit', 'limit must be an integer from 1 to 200');
  return limit;
}

function scopeDigest(scope: ListScope): string {
  return createHash('sha256')
    .update(canonicalStringify([scope.teamId, scope.list, scope.filters]))
    .digest('base64url')
    .slice(0, 22);
}

/** A cursor names the last item of a page and is bound to the team, the list and its filters. */
export function encodeCursor(scope: ListScope, afterId: string): string {
  return Buffer.from(JSON.stringify({ s: scopeDigest(scope), a: afterId })).toString('base64url');
}

export function decodeCursor(scope: ListScope, raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  const invalid = () => new ServiceError('invalid_cursor', 'cursor is not a cursor of this list', { field: 'cursor' });
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 512 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (typeof decoded !== 'object' || decoded === null) throw invalid();
  const { s, a } = decoded as { s?: unknown; a?: unknown };
  if (s !== scopeDigest(scope) || typeof a !== 'string' || a.length > 200) throw invalid();
  return a;
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
