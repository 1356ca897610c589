import { z } from 'zod';
import { boundedText } from '../common/validation.js';

/** POST /endpoints/{id}/stream-tokens: an optional name, so the console can tell a laptop from a server. */
export const CreateStreamTokenInput = z.strictObject({
  name: boundedText(0, 100).default(''),
});
export type CreateStreamTokenInput = z.output<typeof CreateStreamTokenInput>;

export const ListStreamTokensQuery = z.strictObject({
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListStreamTokensQuery = z.output<typeof ListStreamTokensQuery>;

/** What a receiver's handler answered: an HTTP status, or `error` for a handler that failed without one. */
const ackStatus = z.union([z.number().int().min(100).max(599), z.literal('error')], {
  message: 'must be an integer from 100 to 599 or "error"',
});

/** POST /endpoints/{id}/stream/acks: 1 to 100 acknowledgements, each naming the attempt it answers. */
export const StreamAcksInput = z.strictObject({
  acks: z
    .array(
      z.strictObject({
        delivery_id: z.string().max(64),
        attempt: z.number().int().min(1).max(1_000),
        status: ackStatus,
      }),
    )
    .min(1, 'at least one ack')
    .max(100, 'at most 100 acks'),
});
export type StreamAcksInput = z.output<typeof StreamAcksInput>;
