import { z } from 'zod';
import { RawJson } from '../common/raw-json.js';
import { boundedText, idOf, metadataSchema, receiverUrl, utf8Bytes } from '../common/validation.js';

export const MAX_EVENT_PATTERNS = 50;
export const DEFAULT_RETRY_DELAYS = [15, 60, 300, 900, 3600, 14400, 43200, 86400];
export const MAX_RETRY_DELAYS = 8;
export const MAX_RETRY_DELAY_SECONDS = 86_400;
export const MAX_RETRY_DELAY_SUM = 259_200;
export const TIMEOUT_BOUNDS = { min: 1, max: 30, default: 10 } as const;
export const RATE_BOUNDS = { min: 1, max: 1000, default: 50 } as const;
export const MAX_HEADERS = 20;
export const MAX_HEADER_VALUE_BYTES = 1024;
export const MAX_HEADERS_TOTAL_BYTES = 8192;
export const MAX_AUTHORIZATION_BYTES = 4096;
export const MAX_RULE_BYTES = 16_384;

/** An exact event type name, `<prefix>.*`, or `*`. */
const EVENT_PATTERN = /^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$/;
/** RFC 9110 token characters. */
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-type',
  'content-length',
  'authorization',
  'cookie',
  'user-agent',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'forwarded',
  'via',
]);
const FORBIDDEN_HEADER_PREFIXES = ['svc-', 'webhook-', 'x-forwarded-'];

export function isForbiddenHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return FORBIDDEN_HEADERS.has(lower) || FORBIDDEN_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

const events = z
  .array(z.string().max(256).regex(EVENT_PATTERN, 'must be an event type name, <prefix>.* or *'))
  .min(1, 'at least one pattern')
  .max(MAX_EVENT_PATTERNS, `at most ${MAX_EVENT_PATTERNS} patterns`)
  .refine((list) => new Set(list).size === list.length, 'patterns must not repeat')
  .meta({ uniqueItems: true });

/** A filter or a transform, kept as its JSON text; the API description refers to its component (openapi-rules.ts). */
const ruleOf = (rule: 'Filter' | 'Transform') =>
  z
    .instanceof(RawJson, { message: 'must be a JSON object or null' })
    .refine((raw) => raw.byteLength <= MAX_RULE_BYTES, `must be at most ${MAX_RULE_BYTES} bytes`)
    .meta({ rule })
    .nullable();

const retryDelays = z
  .array(z.number().int().min(1).max(MAX_RETRY_DELAY_SECONDS))
  .max(MAX_RETRY_DELAYS, `at most ${MAX_RETRY_DELAYS} delays`)
  .refine(
    (delays) => delays.reduce((a, b) => a + b, 0) <= MAX_RETRY_DELAY_SUM,
    `the delays add up to at most ${MAX_RETRY_DELAY_SUM} seconds`,
  );

/** Header values may hold tabs and printable text only: no line breaks (header injection), NUL or other controls. */
function hasControlCharacters(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

export const headersSchema = z
  .record(z.string(), z.string())
  .meta({
    maxProperties: MAX_HEADERS,
    propertyNames: { type: 'string', pattern: HEADER_TOKEN.source },
    additionalProperties: { type: 'string', maxLength: MAX_HEADER_VALUE_BYTES },
  })
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_HEADERS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_HEADERS} headers` });
    const seen = new Set<string>();
    let total = 0;
    for (const name of names) {
      const value = headers[name] ?? '';
      const lower = name.toLowerCase();
      if (!HEADER_TOKEN.test(name)) ctx.addIssue({ code: 'custom', message: 'not a valid header name', path: [name] });
      else if (isForbiddenHeader(name))
        ctx.addIssue({
          code: 'custom',
          message: 'this header is set by the service and cannot be customised',
          path: [name],
        });
      else if (seen.has(lower))
        ctx.addIssue({ code: 'custom', message: 'header names must differ in more than case', path: [name] });
      else if (utf8Bytes(value) > MAX_HEADER_VALUE_BYTES)
        ctx.addIssue({ code: 'custom', message: `values are at most ${MAX_HEADER_VALUE_BYTES} bytes`, path: [name] });
      else if (hasControlCharacters(value))
        ctx.addIssue({
          code: 'custom',
          message: 'values must not contain line breaks or control characters',
          path: [name],
        });
      seen.add(lower);
      total += utf8Bytes(name) + utf8Bytes(value);
    }
    if (total > MAX_HEADERS_TOTAL_BYTES)
      ctx.addIssue({ code: 'custom', message: `headers are at most ${MAX_HEADERS_TOTAL_BYTES} bytes in all` });
  });

const authorization = z
  .string()
  .min(1)
  .refine((value) => utf8Bytes(value) <= MAX_AUTHORIZATION_BYTES, `at most ${MAX_AUTHORIZATION_BYTES} bytes`)
  .refine((value) => !hasControlCharacters(value), 'must not contain line breaks or control characters')
  .nullable();

const endpointFields = {
  url: receiverUrl,
  name: boundedText(1, 128),
  description: boundedText(0, 4096),
  events,
  filter: ruleOf('Filter'),
  transform: ruleOf('Transform'),
  status: z.enum(['enabled', 'paused'], { message: 'must be enabled or paused' }),
  rate_per_second: z.number().int().min(RATE_BOUNDS.min).max(RATE_BOUNDS.max),
  max_concurrency: z.number().int().min(1).max(3, 'at most 3'),
  retry_delays_seconds: retryDelays,
  timeout_seconds: z.number().int().min(TIMEOUT_BOUNDS.min).max(TIMEOUT_BOUNDS.max),
  headers: headersSchema,
  authorization,
  metadata: metadataSchema,
};

/** `ordered`: one delivery at a time in admission order; `max_concurrency` is then 1. */
export const ORDERINGS = ['none', 'ordered'] as const;
export const ORDERING_ON_FAILURE = ['continue', 'hold'] as const;
const ordering = z.enum(ORDERINGS, { message: 'must be none or ordered' });
const orderingOnFailure = z.enum(ORDERING_ON_FAILURE, { message: 'must be continue or hold' });

/** `hmac` (v1, a shared whsec_ secret) or `ed25519` (v1a, a whpk_ public key for receivers). */
export const SIGNATURE_SCHEMES = ['hmac', 'ed25519'] as const;
const signatureScheme = z.enum(SIGNATURE_SCHEMES, { message: 'must be hmac or ed25519' });

/** `push` (the default) or `stream` (no URL: the receiver opens GET /endpoints/{id}/stream). Set on create only. */
export const DELIVERY_MODES = ['push', 'stream'] as const;

export const CreateEndpointInput = z.strictObject({
  tenant_id: idOf('tenant'),
  /** Required for a push endpoint, refused for a stream one (EndpointService.createEndpoint checks which). */
  url: endpointFields.url.optional(),
  delivery_mode: z.enum(DELIVERY_MODES, { message: 'must be push or stream' }).default('push'),
  name: endpointFields.name.default('Webhook'),
  description: endpointFields.description.default(''),
  events: endpointFields.events.default(['*']),
  filter: endpointFields.filter.default(null),
  transform: endpointFields.transform.default(null),
  status: endpointFields.status.default('enabled'),
  rate_per_second: endpointFields.rate_per_second.default(RATE_BOUNDS.default),
  max_concurrency: endpointFields.max_concurrency.optional(),
  retry_delays_seconds: endpointFields.retry_delays_seconds.default(DEFAULT_RETRY_DELAYS),
  timeout_seconds: endpointFields.timeout_seconds.default(TIMEOUT_BOUNDS.default),
  headers: endpointFields.headers.default({}),
  authorization: endpointFields.authorization.default(null),
  metadata: endpointFields.metadata.default({}),
  signature_scheme: signatureScheme.default('hmac'),
  ordering: ordering.default('none'),
  ordering_on_failure: orderingOnFailure.default('continue'),
});
export type CreateEndpointInput = z.output<typeof CreateEndpointInput>;

export const UpdateEndpointInput = z.strictObject({
  url: endpointFields.url.optional(),
  name: endpointFields.name.optional(),
  description: endpointFields.description.optional(),
  events: endpointFields.events.optional(),
  filter: endpointFields.filter.optional(),
  transform: endpointFields.transform.optional(),
  status: z.enum(['enabled', 'paused', 'disabled'], { message: 'must be enabled or paused' }).optional(),
  rate_per_second: endpointFields.rate_per_second.optional(),
  max_concurrency: endpointFields.max_concurrency.optional(),
  retry_delays_seconds: endpointFields.retry_delays_seconds.optional(),
  timeout_seconds: endpointFields.timeout_seconds.optional(),
  headers: endpointFields.headers.optional(),
  authorization: endpointFields.authorization.optional(),
  metadata: endpointFields.metadata.optional(),
  ordering: ordering.optional(),
  ordering_on_failure: orderingOnFailure.optional(),
});
export type UpdateEndpointInput = z.output<typeof UpdateEndpointInput>;

export const RotateSecretInput = z.strictObject({
  overlap_seconds: z.number().int().min(0).max(86_400).default(86_400),
  /** The new secret's scheme; by default the endpoint's current one. Switching keeps the old one in its overlap. */
  signature_scheme: signatureScheme.optional(),
});
export type RotateSecretInput = z.output<typeof RotateSecretInput>;

export const EmptyInput = z.strictObject({});
export type EmptyInput = z.output<typeof EmptyInput>;

export const ListEndpointsQuery = z.strictObject({
  tenant_id: idOf('tenant').optional(),
  status: z.enum(['enabled', 'paused', 'disabled']).optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListEndpointsQuery = z.output<typeof ListEndpointsQuery>;

export const PreviewInput = z.strictObject({
  endpoint_id: idOf('endpoint'),
  payload: z.union([z.instanceof(RawJson), z.null()], { message: 'payload is required (any JSON value)' }),
  event_type: z.string().max(256).optional(),
});
export type PreviewInput = z.output<typeof PreviewInput>;
