import { z } from 'zod';
import { LIST_ORDERS } from '../common/paging.js';
import { RawJson } from '../common/raw-json.js';
import { idOf, metadataSchema } from '../common/validation.js';
import { MESSAGE_STATUSES } from './message-status.js';

export const MAX_ENDPOINT_IDS = 100;

const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });

/** POST /messages. The payload arrives as its exact JSON text (a raw field); JSON null is a payload too. */
export const CreateMessageInput = z.strictObject({
  tenant_id: idOf('tenant'),
  event_type: z.string().min(1).max(256),
  payload: z.union([z.instanceof(RawJson), z.null()]).optional(),
  body_base64: z.string().optional(),
  content_type: z.string().optional(),
  endpoint_ids: z
    .array(z.string())
    .max(MAX_ENDPOINT_IDS, `at most ${MAX_ENDPOINT_IDS} endpoint IDs`)
    .nullable()
    .optional(),
  external_id: z.string().min(1).max(256).optional(),
  deliver_at: timestamp.nullable().optional(),
  expires_at: timestamp.nullable().optional(),
  metadata: metadataSchema.default({}),
});
// message-body.ts refuses anything but exactly one of payload and body_base64; the API description says so.
z.globalRegistry.add(CreateMessageInput, { oneOf: [{ required: ['payload'] }, { required: ['body_base64'] }] });
export type CreateMessageInput = z.output<typeof CreateMessageInput>;

/** The raw fields of POST /messages (kept as exact text by the transport). */
export const MESSAGE_RAW_FIELDS = ['payload'] as const;

/**
 * GET /messages. Window: created_after inclusive, created_before exclusive, at most 30 days (common/window.ts).
 * `order` newest (an extension) reads the window from its end.
 */
export const ListMessagesQuery = z.strictObject({
  created_after: timestamp.optional(),
  created_before: timestamp.optional(),
  tenant_id: idOf('tenant').optional(),
  event_type: z.string().min(1).max(256).optional(),
  source_id: idOf('source').optional(),
  status: z.enum(MESSAGE_STATUSES).optional(),
  external_id: z.string().min(1).max(256).optional(),
  order: z.enum(LIST_ORDERS).optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListMessagesQuery = z.output<typeof ListMessagesQuery>;
