import { DAY } from './clock.js';
import { invalidField, ServiceError } from './errors.js';

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
  if (!match || !match[2]!.startsWith(prefix))
    throw new ServiceError('invalid_cursor', 'cursor is not a cursor of this list', { field: 'cursor' });
  return { createdAt: new Date(Number(match[1])), id: match[2]! };
}
