import { z } from 'zod';
import {
  DELIVERY_STATUSES,
  EmptyInput,
  FAILURE_CAUSES,
  FAILURE_PHASES,
  ListAttemptsQuery,
  ListDeliveriesQuery,
  parseInput,
  ReplayDeliveryInput,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape, queryOf, timestamp } from '../shapes.js';
import { WINDOW_DESCRIPTIONS } from './messages.routes.js';

const TRIGGERS = ['scheduled', 'retry', 'probe', 'retry_now'] as const;

const milliseconds = z.number().int().min(0);

export const AttemptErrorDetailShape = z
  .strictObject({
    phase: z
      .enum(FAILURE_PHASES)
      .describe('Where it failed: dns, connect, tls, request (sent, no response headers yet), response (reading it)'),
    cause: z.enum(FAILURE_CAUSES).describe('Why: no_such_host, refused, timeout, reset, certificate_expired, ...'),
    code: z.string().nullable().describe('The error code it was read from (ECONNREFUSED, CERT_HAS_EXPIRED, ...)'),
    address: z.string().nullable().describe('The IP address connected to, or the one the URL safety rules refused'),
    port: z.number().int().nullable(),
    connection_reused: z.boolean().describe('Sent over a keep-alive connection an earlier attempt opened'),
    timings_ms: z
      .strictObject({
        dns: milliseconds.nullable(),
        connect: milliseconds.nullable(),
        tls: milliseconds.nullable(),
        first_byte: milliseconds.nullable().describe('From the start of the attempt to the response headers'),
        total: milliseconds,
      })
      .describe(
        'Each phase in ms; null for a phase not reached (or paid by the earlier attempt of a reused connection)',
      ),
  })
  .meta({
    id: 'AttemptErrorDetail',
    description: 'An extension: where and why an attempt without an HTTP answer failed (error_kind stays the code)',
  });

export const DeliveryShape = z
  .strictObject({
    id: z.string().startsWith('wdd_').describe('Delivery ID; the Svc-Delivery-Id header, new for each replay'),
    message_id: z.string().startsWith('wdm_').describe('The message, also the webhook-id of every generation'),
    endpoint_id: z.string().startsWith('wde_'),
    tenant_id: z.string().startsWith('wdt_'),
    event_type: z.string(),
    generation: z.number().int().min(0).describe('0 for the original delivery, then 1, 2, ... per replay'),
    kind: z.enum(['original', 'replay']),
    replay_of: z.string().startsWith('wdd_').nullable().describe('The delivery this one replays'),
    replay_id: z.string().startsWith('wdr_').nullable().describe('The bulk replay job that created it'),
    status: z.enum(DELIVERY_STATUSES).describe('failed and expired are the dead letters'),
    attempt_count: z.number().int().min(0),
    next_attempt_at: timestamp
      .nullable()
      .describe('When the next attempt is due; null while one runs or once finished'),
    last_status_code: z.number().int().nullable(),
    last_error: z
      .string()
      .nullable()
      .describe('Why the last attempt failed or the delivery ended (http_500, timeout, window_over, ...)'),
    last_attempt_at: timestamp.nullable(),
    expires_at: timestamp.describe('No attempt starts at or after this time'),
    body_bytes: z.number().int().min(0),
    content_type: z.string(),
    transformed: z.boolean().describe("Whether the endpoint gets transformed bytes rather than the message's"),
    price: z.strictObject({
      delivery_units: z.number().int().min(0),
      total_usd: z
        .string()
        .regex(/^\d+\.\d+$/)
        .describe('Exact decimal USD of this generation (automatic retries are free)'),
    }),
    created_at: timestamp,
    updated_at: timestamp,
    finished_at: timestamp.nullable(),
    repaired_by: z
      .string()
      .startsWith('wdd_')
      .nullable()
      .describe(
        'An extension: for a failed or expired delivery, the first later generation of its message to its ' +
          'endpoint that succeeded (a replay repaired it; the status stays); null otherwise',
      ),
    sequence: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "An extension, present only on a delivery numbered for an ordered endpoint: its place in the endpoint's " +
          'order, sent as the Svc-Sequence header',
      ),
  })
  .meta({ id: 'Delivery', description: 'One message to one endpoint in one generation (original or replay)' });

export const AttemptShape = z
  .strictObject({
    id: z.string().startsWith('wda_').describe('Attempt ID; the Svc-Attempt-Id header'),
    delivery_id: z.string().startsWith('wdd_'),
    endpoint_id: z.string().startsWith('wde_'),
    number: z.number().int().min(1),
    trigger: z.enum(TRIGGERS),
    started_at: timestamp,
    duration_ms: z.number().int().min(0),
    url_revision: z.number().int().min(1).describe("The endpoint's url_revision the request went to"),
    status_code: z.number().int().nullable(),
    error_kind: z.string().nullable().describe('timeout, network, unsafe_destination, ...; null when answered'),
    error_detail: AttemptErrorDetailShape.optional().describe(
      'An extension, present only when the attempt got no HTTP answer and recorded where and why it failed',
    ),
    outcome: z.enum(['succeeded', 'failed']),
    response_body: z
      .string()
      .nullable()
      .describe('Up to 4 KiB of the response, kept with response_body_logging for response_retention_days'),
    response_body_encoding: z.enum(['utf8', 'base64']).nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Attempt', description: 'One HTTP request of a delivery to its receiver' });

const DeliveryListShape = z
  .strictObject({ data: z.array(DeliveryShape), next_cursor: z.string().nullable() })
  .meta({ id: 'DeliveryList' });
const AttemptListShape = z
  .strictObject({ data: z.array(AttemptShape), next_cursor: z.string().nullable() })
  .meta({ id: 'AttemptList' });

export function deliveryRoutes(services: Services): RouteSpec[] {
  const { deliveries } = services;
  return [
    defineRoute({
      operationId: 'listDeliveries',
      summary:
        'List deliveries of a window of at most 30 days, oldest first or newest first (status failed or expired: ' +
        'dead letters)',
      method: 'GET',
      path: '/deliveries',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListDeliveriesQuery, {
        ...WINDOW_DESCRIPTIONS,
        repaired:
          'An extension: true lists only dead letters a later generation repaired (repaired_by set), false ' +
          'leaves them out',
        sequence:
          "An extension: an ordered endpoint's delivery by its Svc-Sequence number (a gap a receiver saw); needs " +
          'endpoint_id',
        latest_generation:
          'An extension: true leaves out a dead letter whose message has a later dead-letter generation to the ' +
          'same endpoint (a failure and its failed replays list once, as the newest); needs status failed or expired',
      }),
      responses: { 200: DeliveryListShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await deliveries.listDeliveries(ctx, parseInput(ListDeliveriesQuery, query));
        return { status: 200, body: { data: page.data, next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getDelivery',
      summary: 'Read a delivery',
      method: 'GET',
      path: '/deliveries/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: DeliveryShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 200, body: await deliveries.getDelivery(ctx, params['id']!) };
      },
    }),
    defineRoute({
      operationId: 'listDeliveryAttempts',
      summary: "List a delivery's attempts, oldest first",
      method: 'GET',
      path: '/deliveries/:id/attempts',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListAttemptsQuery),
      responses: { 200: AttemptListShape, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params, query }) {
        const page = await deliveries.listAttempts(ctx, params['id']!, parseInput(ListAttemptsQuery, query));
        return { status: 200, body: { data: page.data, next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'retryDeliveryNow',
      summary:
        'Make a delivery waiting for a retry (or held behind an open circuit) due now, with its remaining attempts; free',
      method: 'POST',
      path: '/deliveries/:id/retry_now',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: EmptyInput,
      responses: { 202: DeliveryShape, 404: ErrorShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 202, body: await deliveries.retryNow(ctx, params['id']!) };
      },
    }),
    defineRoute({
      operationId: 'replayDelivery',
      summary:
        'Replay a succeeded, failed or expired delivery as a new paid generation (same webhook-id, new delivery ID)',
      method: 'POST',
      path: '/deliveries/:id/replay',
      auth: 'secret_key',
      rateClass: 'admission',
      idempotent: true,
      input: ReplayDeliveryInput,
      responses: {
        202: DeliveryShape,
        402: ErrorShape,
        404: ErrorShape,
        409: ErrorShape,
        410: ErrorShape,
        422: ErrorShape,
        429: ErrorShape,
      },
      async handler({ ctx, params, input }) {
        return { status: 202, body: await deliveries.replay(ctx, params['id']!, input) };
      },
    }),
  ];
}
