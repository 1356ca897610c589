import { z } from 'zod';
import {
  CreateEndpointInput,
  EmptyInput,
  PreviewInput,
  RawJson,
  RotateSecretInput,
  UpdateEndpointInput,
  previewEndpoint,
  type Actor,
  type EndpointView,
  type PreviewResult,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteResult, type RouteSpec } from '../route.js';
import { decimalString, ErrorShape, listOf, pageQuery, timestamp } from '../shapes.js';

const nullableTimestamp = timestamp.nullable();

export const EndpointShape = z.strictObject({
  id: z.string().startsWith('wde_'),
  tenant_id: z.string(),
  url: z.string(),
  name: z.string(),
  description: z.string(),
  events: z.array(z.string()),
  filter: z.unknown(),
  transform: z.unknown(),
  transform_version: decimalString,
  status: z.enum(['enabled', 'paused', 'disabled']),
  disabled_reason: z.string().nullable(),
  rate_per_second: z.number().int(),
  max_concurrency: z.number().int(),
  retry_delays_seconds: z.array(z.number().int()),
  timeout_seconds: z.number().int(),
  headers: z.array(z.string()),
  has_authorization: z.boolean(),
  metadata: z.record(z.string(), z.string()),
  secret_version: z.number().int(),
  old_secret_expires_at: nullableTimestamp,
  health: z.strictObject({
    circuit: z.enum(['closed', 'half_open', 'open']),
    consecutive_failures: z.number().int(),
    last_success_at: nullableTimestamp,
    last_failure_at: nullableTimestamp,
    next_probe_at: nullableTimestamp,
  }),
  queued_count: z.number().int(),
  url_revision: decimalString,
  version: decimalString,
  created_at: timestamp,
  updated_at: timestamp,
});

export const EndpointWithSecretShape = EndpointShape.extend({
  signing_secret: z.string().startsWith('whsec_').optional(),
});
const ResumeReplayShape = z.union([EndpointShape, z.strictObject({ id: z.string(), status: z.string() })]);

export const PreviewShape = z.strictObject({
  endpoint_id: z.string(),
  event_type: z.string().nullable(),
  matches: z.boolean(),
  reason: z
    .enum(['endpoint_disabled', 'event_type_not_subscribed', 'filter_not_matched', 'transform_failed'])
    .nullable(),
  event_type_matched: z.boolean().nullable(),
  filter_matched: z.boolean(),
  transform_applied: z.boolean(),
  transform_error: z.strictObject({ field: z.string(), message: z.string() }).nullable(),
  content_type: z.literal('application/json'),
  body: z.unknown(),
  body_bytes: z.number().int().nullable(),
  delivery_units: z.number().int().nullable(),
});

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** The API shape of an endpoint; the signing secret, when shown, is the last member. */
export function renderEndpoint(view: EndpointView, signingSecret?: string) {
  return {
    id: view.id,
    tenant_id: view.tenantId,
    url: view.url,
    name: view.name,
    description: view.description,
    events: view.events,
    filter: view.filter === null ? null : new RawJson(view.filter),
    transform: view.transform === null ? null : new RawJson(view.transform),
    transform_version: view.transformVersion,
    status: view.status,
    disabled_reason: view.disabledReason,
    rate_per_second: view.ratePerSecond,
    max_concurrency: view.maxConcurrency,
    retry_delays_seconds: view.retryDelaysSeconds,
    timeout_seconds: view.timeoutSeconds,
    headers: view.headerNames,
    has_authorization: view.hasAuthorization,
    metadata: view.metadata,
    secret_version: view.secretVersion,
    old_secret_expires_at: iso(view.oldSecretExpiresAt),
    health: {
      circuit: view.health.circuit,
      consecutive_failures: view.health.consecutiveFailures,
      last_success_at: iso(view.health.lastSuccessAt),
      last_failure_at: iso(view.health.lastFailureAt),
      next_probe_at: iso(view.health.nextProbeAt),
    },
    queued_count: view.queuedCount,
    url_revision: view.urlRevision,
    version: view.version,
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
    ...(signingSecret === undefined ? {} : { signing_secret: signingSecret }),
  };
}

export function renderPreview(result: PreviewResult) {
  return {
    endpoint_id: result.endpointId,
    event_type: result.eventType,
    matches: result.matches,
    reason: result.reason,
    event_type_matched: result.eventTypeMatched,
    filter_matched: result.filterMatched,
    transform_applied: result.transformApplied,
    transform_error: result.transformError,
    content_type: result.contentType,
    body: result.body === null ? null : new RawJson(result.body),
    body_bytes: result.bodyBytes,
    delivery_units: result.deliveryUnits,
  };
}

export function endpointRoutes(services: Services): RouteSpec[] {
  const { endpoints } = services;
  const withEtag = (view: EndpointView) => ({ ETag: view.etag });

  /** Secrets are never stored in idempotency records: the stored body has none. */
  const withoutSecret = (result: RouteResult) => {
    const { signing_secret: _secret, ...rest } = result.body as { signing_secret?: string };
    return rest;
  };
  /** A replay shows the secret only to the key that made it, and only while it is still current. */
  const replayWithSecret = async (stored: Buffer, replay: { actor: Actor; sameKey: boolean }): Promise<Buffer> => {
    if (!replay.sameKey) return stored;
    const { id, secret_version: version } = JSON.parse(stored.toString('utf8')) as {
      id: string;
      secret_version: number;
    };
    const secret = await endpoints.currentSecretMadeBy({ actor: replay.actor }, id, version);
    if (secret === null) return stored;
    const text = stored.toString('utf8');
    return Buffer.from(`${text.slice(0, -1)},"signing_secret":${JSON.stringify(secret)}}`, 'utf8');
  };

  return [
    defineRoute({
      operationId: 'createEndpoint',
      summary: 'Register a receiver endpoint for a tenant (the signing secret is shown once)',
      method: 'POST',
      path: '/endpoints',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: CreateEndpointInput,
      rawFields: ['filter', 'transform'],
      responses: { 201: EndpointWithSecretShape, 409: ErrorShape, 422: ErrorShape, 503: ErrorShape },
      async handler({ ctx, input }) {
        const { endpoint, signingSecret } = await endpoints.createEndpoint(ctx, input);
        return { status: 201, body: renderEndpoint(endpoint, signingSecret), headers: withEtag(endpoint) };
      },
      storedBody: withoutSecret,
      replayBody: replayWithSecret,
    }),
    defineRoute({
      operationId: 'listEndpoints',
      summary: 'List endpoints (deleted ones excluded), oldest first',
      method: 'GET',
      path: '/endpoints',
      auth: 'secret_key',
      rateClass: 'read',
      query: z.object({
        tenant_id: z.string().optional(),
        status: z.enum(['enabled', 'paused', 'disabled']).optional(),
        ...pageQuery,
      }),
      responses: { 200: listOf(EndpointShape), 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await endpoints.listEndpoints(ctx, query);
        return {
          status: 200,
          body: { data: page.data.map((view) => renderEndpoint(view)), next_cursor: page.nextCursor },
        };
      },
    }),
    defineRoute({
      operationId: 'getEndpoint',
      summary: 'Read an endpoint (no secret, header values or authorization)',
      method: 'GET',
      path: '/endpoints/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: EndpointShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        const view = await endpoints.getEndpoint(ctx, params['id']!);
        return { status: 200, body: renderEndpoint(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'updateEndpoint',
      summary:
        'Change an endpoint (null clears filter, transform and authorization; arrays and objects replace in full)',
      method: 'PATCH',
      path: '/endpoints/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      input: UpdateEndpointInput,
      rawFields: ['filter', 'transform'],
      responses: {
        200: EndpointShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
        503: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, body }) {
        const view = await endpoints.updateEndpoint(ctx, params['id']!, ifMatch, body);
        return { status: 200, body: renderEndpoint(view), headers: withEtag(view) };
      },
    }),
    defineRoute({
      operationId: 'deleteEndpoint',
      summary: 'Delete an endpoint: no new messages; unclaimed deliveries are canceled',
      method: 'DELETE',
      path: '/endpoints/:id',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      responses: { 204: null, 404: ErrorShape, 412: ErrorShape, 422: ErrorShape, 428: ErrorShape },
      async handler({ ctx, params, ifMatch }) {
        await endpoints.deleteEndpoint(ctx, params['id']!, ifMatch);
        return { status: 204 };
      },
    }),
    defineRoute({
      operationId: 'rotateEndpointSecret',
      summary: 'Rotate the signing secret (shown once); old secrets keep signing for overlap_seconds',
      method: 'POST',
      path: '/endpoints/:id/rotate_secret',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: true,
      input: RotateSecretInput,
      responses: {
        200: EndpointWithSecretShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
        503: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const { endpoint, signingSecret } = await endpoints.rotateSecret(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderEndpoint(endpoint, signingSecret), headers: withEtag(endpoint) };
      },
      storedBody: withoutSecret,
      replayBody: replayWithSecret,
    }),
    defineRoute({
      operationId: 'resumeEndpoint',
      summary: 'Resume a disabled endpoint or one with an open circuit: re-checks the URL, sends one probe',
      method: 'POST',
      path: '/endpoints/:id/resume',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      ifMatch: true,
      input: EmptyInput,
      responses: {
        200: ResumeReplayShape,
        404: ErrorShape,
        409: ErrorShape,
        412: ErrorShape,
        422: ErrorShape,
        428: ErrorShape,
        503: ErrorShape,
      },
      async handler({ ctx, params, ifMatch, input }) {
        const view = await endpoints.resumeEndpoint(ctx, params['id']!, ifMatch, input);
        return { status: 200, body: renderEndpoint(view), headers: withEtag(view) };
      },
      // The spec: an idempotent replay of resume returns only id and status.
      storedBody: (result) => {
        const { id, status } = result.body as { id: string; status: string };
        return { id, status };
      },
    }),
    defineRoute({
      operationId: 'previewEndpoint',
      summary: "Evaluate an endpoint's event patterns, filter and transform on a payload; nothing is sent or charged",
      method: 'POST',
      path: '/previews',
      auth: 'secret_key',
      rateClass: 'read',
      input: PreviewInput,
      rawFields: ['payload'],
      responses: { 200: PreviewShape, 404: ErrorShape, 422: ErrorShape },
      async handler({ ctx, input }) {
        return { status: 200, body: renderPreview(await previewEndpoint(endpoints, ctx, input)) };
      },
    }),
  ];
}
