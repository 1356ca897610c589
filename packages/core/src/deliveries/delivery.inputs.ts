import { z } from 'zod';
import { LIST_ORDERS } from '../common/paging.js';
import { idOf } from '../common/validation.js';
import { DELIVERY_STATUSES } from '../messages/message-status.js';

const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });

const flag = z
  .enum(['true', 'false'])
  .transform((value) => value === 'true')
  .optional();

/**
 * GET /deliveries: status failed or expired lists the dead letters. Same window rules as GET /messages. Extensions:
 * `order` (newest first), `repaired` (true: only dead letters a later generation repaired; false: all but those),
 * `sequence` (an ordered endpoint's Svc-Sequence number; needs endpoint_id), `latest_generation` (true: a dead letter
 * with a later dead-letter generation of its message to its endpoint is left out; needs status failed or expired).
 * The pairings are checked by the service (a refined object could not be narrowed with omit()).
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
  repaired: flag,
  sequence: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, 'must be a positive whole number')
    .transform(Number)
    .optional(),
  latest_generation: flag,
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
