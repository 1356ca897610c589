import { z } from 'zod';
import { LIST_ORDERS } from '../common/paging.js';
import { anyId, idOf } from '../common/validation.js';
import { OPERATIONAL_EVENT_TYPES } from './operational-event.types.js';

/** GET /events: type must be one of the spec's types (else 422 invalid_field); `order` newest is an extension. */
export const ListOperationalEventsQuery = z.strictObject({
  type: z.enum(OPERATIONAL_EVENT_TYPES).optional(),
  resource_id: anyId.optional(),
  tenant_id: idOf('tenant').optional(),
  order: z.enum(LIST_ORDERS).optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListOperationalEventsQuery = z.output<typeof ListOperationalEventsQuery>;
