import { z } from 'zod';
import { idOf } from '../common/validation.js';

const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });

/** Money in the API is an exact decimal string of USD; at most 6 decimals (micro-dollars). */
export const usdAmount = z.string().regex(/^\d{1,12}(\.\d{1,6})?$/, 'must be a decimal string of USD, e.g. "1.50"');

/**
 * POST /replays: one endpoint's failed and expired deliveries created in the window (at most 30 days; defaults as
 * GET /deliveries), optionally of one event type, bounded by max_cost_usd. dry_run answers the count and the
 * price without storing anything (and needs no Idempotency-Key).
 */
export const CreateReplayInput = z.strictObject({
  endpoint_id: idOf('endpoint'),
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  event_type: z.string().min(1).max(256).optional(),
  max_cost_usd: usdAmount.optional(),
  dry_run: z.boolean().default(false),
});
export type CreateReplayInput = z.output<typeof CreateReplayInput>;

export const ListReplaysQuery = z.strictObject({
  endpoint_id: idOf('endpoint').optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListReplaysQuery = z.output<typeof ListReplaysQuery>;
