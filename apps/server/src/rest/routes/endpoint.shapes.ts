import { z } from 'zod';
import { RawJson, type EndpointView, type PreviewResult } from '@svc/core';
import { createdAt, decimalString, metadataField, timestamp, updatedAt, versionField } from '../shapes.js';

const nullableTimestamp = timestamp.nullable();

export const EndpointShape = z
  .strictObject({
    id: z.string().startsWith('wde_').describe('Endpoint ID (wde_...)'),
    tenant_id: z.string().describe('The tenant this endpoint receives messages for'),
    delivery_mode: z
      .literal('stream')
      .optional()
      .describe(
        'Extension: present (as stream) only for a stream endpoint, whose receiver fetches its deliveries from GET /endpoints/{id}/stream; absent means push',
      ),
    url: z
      .string()
      .optional()
      .describe('The receiver URL (HTTPS); its query is kept secret in logs. Absent for a stream endpoint'),
    name: z.string(),
    description: z.string(),
    events: z.array(z.string()).describe('Event type patterns: exact names, `<prefix>.*` or `*` (all)'),
    filter: z.unknown().describe('A filter on the payload, exactly as written, or null'),
    transform: z.unknown().describe('A transform of the payload, exactly as written, or null'),
    transform_version: decimalString.describe('Moves by one whenever the transform changes'),
    status: z.enum(['enabled', 'paused', 'disabled']).describe('disabled is set by the service only'),
    disabled_reason: z.string().nullable().describe('Why the service disabled the endpoint, or null'),
    rate_per_second: z.number().int().describe('At most this many delivery attempts per second'),
    max_concurrency: z.number().int().describe('At most this many attempts in flight at once (1 to 3)'),
    retry_delays_seconds: z.array(z.number().int()).describe('Seconds before each retry'),
    timeout_seconds: z.number().int().describe('How long an attempt may take'),
    headers: z
      .array(z.string())
      .describe('Names of the custom headers sent with each delivery (values are write-only)'),
    has_authorization: z.boolean().describe('Whether an Authorization value is sent (the value is write-only)'),
    metadata: metadataField,
    secret_version: z.number().int().describe('Moves by one with every secret rotation'),
    old_secret_expires_at: nullableTimestamp.describe('Until when the previous secret still signs, or null'),
    signature_scheme: z
      .enum(['hmac', 'ed25519'])
      .optional()
      .describe(
        'Extension: present (as ed25519) only for an endpoint that signs v1a with ed25519; absent means hmac (v1)',
      ),
    public_key: z
      .string()
      .startsWith('whpk_')
      .optional()
      .describe(
        "Extension: an ed25519 endpoint's current public key (whpk_...), readable at any time; absent for hmac",
      ),
    public_keys: z
      .array(
        z.strictObject({
          public_key: z.string().startsWith('whpk_'),
          expires_at: nullableTimestamp.describe('When this key stops signing; null for the current key'),
        }),
      )
      .optional()
      .describe(
        'Extension: every ed25519 public key that signs now, the current one first, then the previous one until its rotation overlap ends; absent when no ed25519 key signs',
      ),
    ordering: z
      .enum(['none', 'ordered'])
      .optional()
      .describe(
        'Extension: ordered sends deliveries one at a time in admission order, each with Svc-Sequence; present only when ordering or ordering_on_failure is not the default (none, continue)',
      ),
    ordering_on_failure: z
      .enum(['continue', 'hold'])
      .optional()
      .describe(
        'Extension: what a delivery that ends without success does to an ordered endpoint: continue (the next goes) or hold (the endpoint is paused); present with ordering',
      ),
    health: z
      .strictObject({
        circuit: z.enum(['closed', 'half_open', 'open']),
        consecutive_failures: z.number().int(),
        last_success_at: nullableTimestamp,
        last_failure_at: nullableTimestamp,
        next_probe_at: nullableTimestamp,
      })
      .describe('Delivery health: the circuit breaker state and recent outcomes'),
    queued_count: z.number().int().describe('Deliveries waiting for this endpoint'),
    url_revision: decimalString.describe('Moves by one whenever the URL changes'),
    version: versionField,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .meta({
    id: 'Endpoint',
    description: "A tenant's receiver. Its signing secret, header values and authorization are never readable.",
  });

export const EndpointWithSecretShape = EndpointShape.extend({
  signing_secret: z
    .string()
    .startsWith('whsec_')
    .optional()
    .describe('The new signing secret (whsec_...), shown once; an idempotent replay shows it only to the same key'),
}).meta({ id: 'EndpointWithSecret', description: 'An endpoint with its new signing secret, shown this once' });

export const ResumeReplayShape = z.union([EndpointShape, z.strictObject({ id: z.string(), status: z.string() })]).meta({
  id: 'ResumedEndpoint',
  description: 'The resumed endpoint; an idempotent replay returns only id and status',
});

export const PreviewShape = z
  .strictObject({
    endpoint_id: z.string(),
    event_type: z.string().nullable(),
    matches: z.boolean().describe('Whether the payload would be delivered'),
    reason: z
      .enum(['endpoint_disabled', 'event_type_not_subscribed', 'filter_not_matched', 'transform_failed'])
      .nullable()
      .describe('The first reason it would not be delivered, or null'),
    event_type_matched: z.boolean().nullable().describe('null when no event_type was given'),
    filter_matched: z.boolean(),
    transform_applied: z.boolean(),
    transform_error: z.strictObject({ field: z.string(), message: z.string() }).nullable(),
    content_type: z.literal('application/json'),
    body: z.unknown().describe('The exact body that would be delivered, or null when the transform fails'),
    body_bytes: z.number().int().nullable(),
    delivery_units: z.number().int().nullable().describe('Billable delivery units of the body'),
  })
  .meta({
    id: 'EndpointPreview',
    description: 'What an endpoint would do with a payload; nothing is sent, stored or charged',
  });

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** The API shape of an endpoint; the signing secret, when shown, is the last member. */
export function renderEndpoint(view: EndpointView, signingSecret?: string | null) {
  return {
    id: view.id,
    tenant_id: view.tenantId,
    // A push endpoint's answer stays byte for byte what the spec shows; a stream endpoint has a mode and no URL.
    ...(view.deliveryMode === 'stream' ? { delivery_mode: 'stream' as const } : { url: view.url }),
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
    // An hmac endpoint's answer stays byte for byte what the spec shows: the scheme appears only for ed25519.
    ...(view.signatureScheme === 'ed25519' ? { signature_scheme: 'ed25519' as const, public_key: view.publicKey } : {}),
    // Every ed25519 key that signs now (an old one keeps signing through its overlap), so absent for pure hmac.
    ...(view.publicKeys.length > 0
      ? { public_keys: view.publicKeys.map((k) => ({ public_key: k.publicKey, expires_at: iso(k.expiresAt) })) }
      : {}),
    // The same for ordering: an endpoint that never used it answers exactly as before.
    ...(view.ordering !== 'none' || view.orderingOnFailure !== 'continue'
      ? { ordering: view.ordering, ordering_on_failure: view.orderingOnFailure }
      : {}),
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
    ...(signingSecret === undefined || signingSecret === null ? {} : { signing_secret: signingSecret }),
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
