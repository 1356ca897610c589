import { z } from 'zod';
import { LIST_ORDERS } from '../common/paging.js';
import { idOf } from '../common/validation.js';
import { DELIVERY_STATUSES } from '../messages/message-status.js';

const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });

/**
 * GET /deliveries: status failed or expired lists the dead letters. Same window rules as GET /messages. Extensions:
 * `order` (newest first), `repaired` (true: only dead letters a later generation repaired; false: all but those).
 */
export const ListDeliveriesQuery = z.strictObject({
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
  message_id: idOf('message').optional(),
  endpoint_id: idOf('endpoint').optional(),
  tenant_id: idOf('tenant').optional(),
  event_type: z.string().min(1).max(256).optional(),
  kind: z.enum(['original', 'replay']).optional(),
  repaired: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional(),
  order: z.enum(LIST_ORDERS).optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListDeliveriesQuery = z.output<typeof ListDeliveriesQuery>;

/** GET /deliveries/{id}/attempts. */
export const ListAttemptsQuery = z.strictObject({
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListAttemptsQuery = z.output<typeof ListAttemptsQuery>;

/**
 * POST /deliveries/{id}/replay. configuration `frozen` (default) sends the bytes the delivery was sent with;
 * `current` applies the endpoint's current transform to the message's original content.
 */
export const ReplayDeliveryInput = z.strictObject({
  configuration: z.enum(['frozen', 'current']).default('frozen'),
});
export type ReplayDeliveryInput = z.output<typeof ReplayDeliveryInput>;
