import { z } from 'zod';
import {
  CreateMessageInput,
  DELIVERY_STATUSES,
  EmptyInput,
  ListMessagesQuery,
  MESSAGE_RAW_FIELDS,
  MESSAGE_STATUSES,
  parseInput,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape, metadataField, queryOf, timestamp } from '../shapes.js';

const DeliveryCountsShape = z
  .strictObject(
    Object.fromEntries(DELIVERY_STATUSES.map((s) => [s, z.number().int().min(0)])) as Record<
      (typeof DELIVERY_STATUSES)[number],
      z.ZodNumber
    >,
  )
  .describe("Number of the message's original deliveries in each status");

export const MessageShape = z
  .strictObject({
    id: z.string().startsWith('wdm_').describe('Message ID; also the webhook-id header of every delivery'),
    tenant_id: z.string().startsWith('wdt_'),
    event_type: z.string(),
    external_id: z.string().nullable().describe('Your own lookup ID (not deduplicated)'),
    origin: z.enum(['api', 'test', 'source']),
    source_id: z.string().nullable(),
    status: z.enum(MESSAGE_STATUSES).describe('Derived from the original deliveries (docs/delivery.md)'),
    body_bytes: z.number().int().min(0),
    body_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .describe('Hex SHA-256 of the body; null once the message is redacted (erased with the body)'),
    content_type: z.string(),
    deliver_at: timestamp,
    expires_at: timestamp.describe('No attempt starts at or after this time'),
    retained_until: timestamp,
    content_available: z.boolean(),
    delivery_counts: DeliveryCountsShape,
    repaired_count: z
      .number()
      .int()
      .min(0)
      .describe(
        'An extension: how many of the failed or expired original deliveries a later generation (a replay) has ' +
          'delivered since; the status stays derived from delivery_counts',
      ),
    price: z.strictObject({
      ingest_units: z.number().int().min(0),
      delivery_units: z.number().int().min(0),
      total_usd: z
        .string()
        .regex(/^\d+\.\d+$/)
        .describe('Exact decimal USD'),
      rate_version: z.string(),
    }),
    redacted: z.boolean(),
    redaction_status: z.enum(['redacting', 'complete']).nullable(),
    redacted_at: timestamp.nullable(),
    metadata: metadataField,
    created_at: timestamp,
  })
  .meta({ id: 'Message', description: 'An accepted event of one tenant and one event type, with immutable bytes' });

const MessageListShape = z
  .strictObject({
    data: z.array(MessageShape).describe('Messages oldest first (newest first with order=newest), without bodies'),
    next_cursor: z
      .string()
      .nullable()
      .describe('The next page; with a status filter a page may be short while this is set'),
  })
  .meta({ id: 'MessageList' });

const CancelResultShape = z
  .strictObject({
    message_id: z.string().startsWith('wdm_'),
    canceled_count: z.number().int().min(0).describe('Original deliveries canceled now (no attempt held them)'),
    in_flight_count: z
      .number()
      .int()
      .min(0)
      .describe('Original deliveries with an attempt running: it finishes, its retries are canceled'),
    already_terminal_count: z.number().int().min(0).describe('Original deliveries that had already finished'),
  })
  .meta({ id: 'MessageCancelResult' });

const RedactResultShape = z
  .strictObject({
    message_id: z.string().startsWith('wdm_'),
    status: z
      .enum(['redacting', 'complete'])
      .describe('redacting until the stored bytes are gone from the database (within 24 hours), then complete'),
    redacted_at: timestamp,
  })
  .meta({ id: 'MessageRedactResult' });

/** Query parameters of GET /messages and GET /deliveries: the window. */
export const WINDOW_DESCRIPTIONS = {
  created_after: 'Inclusive; default 30 days before created_before',
  created_before: 'Exclusive; default now; at most 30 days after created_after',
};

export function messageRoutes(services: Services): RouteSpec[] {
  const { admission, messages, messageRepair } = services;
  return [
    defineRoute({
      operationId: 'createMessage',
      summary: 'Publish a message: it fans out to every matching endpoint of the tenant',
      method: 'POST',
      path: '/messages',
      auth: 'secret_key',
      rateClass: 'admission',
      idempotent: true,
      input: CreateMessageInput,
      rawFields: MESSAGE_RAW_FIELDS,
      responses: {
        202: MessageShape,
        402: ErrorShape,
        409: ErrorShape,
        413: ErrorShape,
        422: ErrorShape,
        429: ErrorShape,
        503: ErrorShape,
      },
      async handler({ ctx, input }) {
        const message = await admission.admit({ actor: ctx.actor, input, options: { origin: 'api' } });
        return { status: 202, body: message };
      },
      // Admission batches the key's lock and record with the work of concurrent requests (docs/admission.md).
      runIdempotent({ ctx, input }, { key, fingerprint, keep }) {
        return admission.admitOnce(
          { actor: ctx.actor, input, options: { origin: 'api' } },
          { key, fingerprint, keep: (message) => keep({ status: 202, body: message }) },
        );
      },
    }),
    defineRoute({
      operationId: 'getMessage',
      summary: 'Read a message with its delivery counts and status',
      method: 'GET',
      path: '/messages/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: MessageShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 200, body: await messages.getMessage(ctx, params['id']!) };
      },
    }),
    defineRoute({
      operationId: 'listMessages',
      summary: 'List messages of a window of at most 30 days, oldest first (or newest first), without bodies',
      method: 'GET',
      path: '/messages',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListMessagesQuery, { ...WINDOW_DESCRIPTIONS, status: 'Applied within each page' }),
      responses: { 200: MessageListShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await messages.listMessages(ctx, parseInput(ListMessagesQuery, query));
        return { status: 200, body: { data: page.data, next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getMessageContent',
      summary: "The message's original accepted bytes with its Content-Type, until redaction or retained_until",
      method: 'GET',
      path: '/messages/:id/content',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: null, 404: ErrorShape, 410: ErrorShape },
      rawResponses: [200],
      async handler({ ctx, params }) {
        const content = await messages.getContent(ctx, params['id']!);
        return { status: 200, raw: content.body, contentType: content.contentType };
      },
    }),
    defineRoute({
      operationId: 'cancelMessage',
      summary:
        'Cancel the original deliveries no attempt holds; in-flight attempts finish without retries; nothing refunded',
      method: 'POST',
      path: '/messages/:id/cancel',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: EmptyInput,
      responses: { 200: CancelResultShape, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 200, body: await messageRepair.cancelMessage(ctx, params['id']!) };
      },
    }),
    defineRoute({
      operationId: 'redactMessage',
      summary:
        'Erase the body and every transformed copy irreversibly and cancel every pending delivery, replays included',
      method: 'POST',
      path: '/messages/:id/redact',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: EmptyInput,
      responses: { 202: RedactResultShape, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 202, body: await messageRepair.redactMessage(ctx, params['id']!) };
      },
    }),
  ];
}
