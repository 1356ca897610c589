import { DAY } from './clock.js';
import { invalidField } from './errors.js';
import { decodeWindowCursor, encodeWindowCursor, invalidCursor, type ListScope } from './paging.js';

/** The longest created_after..created_before window of a list (messages, deliveries, analytics). */
export const MAX_WINDOW_DAYS = 30;

export interface TimeWindow {
  /** Inclusive. */
  after: Date;
  /** Exclusive. */
  before: Date;
}

/**
 * created_after (inclusive, default 30 days before created_before) and created_before (exclusive, default now),
 * at most 30 days apart and in order; 422 invalid_field names the offending parameter. The default "now" is the
 * end of the current millisecond, so what was created in it is listed too.
 */
export function parseWindow(raw: { created_after?: string; created_before?: string }, now: Date): TimeWindow {
  const before = raw.created_before === undefined ? new Date(now.getTime() + 1) : new Date(raw.created_before);
  const after =
    raw.created_after === undefined ? new Date(before.getTime() - MAX_WINDOW_DAYS * DAY) : new Date(raw.created_after);
  if (after >= before)
    throw invalidField(
      raw.created_after === undefined ? 'created_before' : 'created_after',
      'created_after must be before created_before',
    );
  if (before.getTime() - after.getTime() > MAX_WINDOW_DAYS * DAY)
    throw invalidField('created_after', `the window is at most ${MAX_WINDOW_DAYS} days`);
  return { after, before };
}

/** A page position in a list ordered by (created_at, id): the cursor names the last item shown. */
export function encodePosition(createdAt: Date, id: string): string {
  return `${createdAt.getTime()}:${id}`;
}

export function decodePosition(raw: string | null, prefix: string): { createdAt: Date; id: string } | null {
  if (raw === null) return null;
  const match = /^(\d{1,15}):([a-z]+_[0-9a-z]{26})$/.exec(raw);
  if (!match || !match[2]!.startsWith(prefix)) throw invalidCursor();
  return { createdAt: new Date(Number(match[1])), id: match[2]! };
}

/** Where a page of a list with a window starts: its window, and the last item of the previous page if any. */
export interface WindowedPosition {
  window: TimeWindow;
  position: { createdAt: Date; id: string } | null;
}

/**
 * The window and position of a page of a list ordered by (created_at, id) within a window. The first page resolves
 * the window from `created_after` and `created_before` (their defaults relative to now); its cursor carries that
 * window, and later pages keep it, so a default `created_before` of "now" does not move while the client pages.
 * `scope.filters` hold the filters as sent (the window parameters included, null when omitted): a cursor continues
 * only the same request.
 */
export function openWindowedPage(
  scope: ListScope,
  query: { created_after?: string; created_before?: string; cursor?: unknown },
  now: Date,
  idPrefix: string,
): WindowedPosition {
  const cursor = decodeWindowCursor(scope, query.cursor);
  if (cursor === null) return { window: parseWindow(query, now), position: null };
  const [after, before] = cursor.window;
  if (after >= before || before - after > MAX_WINDOW_DAYS * DAY) throw invalidCursor();
  return {
    window: { after: new Date(after), before: new Date(before) },
    position: decodePosition(cursor.afterId, idPrefix),
  };
}

/** The cursor after `last` in a list with a window: the position and the window of the first page. */
export function windowedCursor(scope: ListScope, window: TimeWindow, last: { created_at: Date; id: string }): string {
  return encodeWindowCursor(
    scope,
    [window.after.getTime(), window.before.getTime()],
    encodePosition(last.created_at, last.id),
  );
}
