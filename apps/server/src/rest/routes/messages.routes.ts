import { z } from 'zod';
import { CreateMessageInput, DELIVERY_STATUSES, MESSAGE_RAW_FIELDS, MESSAGE_STATUSES, type Services } from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape, metadataField, timestamp } from '../shapes.js';

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
    body_sha256: z.string().regex(/^[0-9a-f]{64}$/),
    content_type: z.string(),
    deliver_at: timestamp,
    expires_at: timestamp.describe('No attempt starts at or after this time'),
    retained_until: timestamp,
    content_available: z.boolean(),
    delivery_counts: DeliveryCountsShape,
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

export function messageRoutes(services: Services): RouteSpec[] {
  const { messages } = services;
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
      },
      async handler({ ctx, input }) {
        const message = await messages.admitMessage(ctx, input, { origin: 'api' });
        return { status: 202, body: message };
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
  ];
}
