'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isNullableString, isObject } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { listEvents } from './event.api';
import type { EventFilters, OperationalEventPage } from './event.types';

/**
 * A page of the feed newest first: from the newest event (cursor null: "load newer" reads from the top until it
 * meets what is shown), or older than a newest-first page's nextCursor ("load older").
 */
export async function listEventsAction(
  filters: EventFilters,
  cursor: string | null,
): Promise<ActionResult<OperationalEventPage>> {
  if (!isObject(filters)) return invalidArgument('filters', 'filters must be an object');
  const { type, resourceId, tenantId } = filters;
  if (typeof type !== 'string' || typeof resourceId !== 'string' || typeof tenantId !== 'string')
    return invalidArgument('filters', 'filters must be text');
  if (!isNullableString(cursor)) return invalidArgument('cursor', 'cursor must be text or null');
  return toActionResult(() => listEvents({ type, resourceId, tenantId }, cursor, 'newest'));
}
