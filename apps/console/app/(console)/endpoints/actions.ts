'use server';

import type { ActionResult } from '@/lib/api-error';
import {
  invalidArgument,
  isInteger,
  isIntegerArray,
  isNullableString,
  isObject,
  isStringArray,
  isStringRecord,
} from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import {
  createEndpoint,
  deleteEndpoint,
  previewEndpoint,
  resumeEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
} from './endpoint.api';
import type {
  CreateEndpointInput,
  Endpoint,
  EndpointChanges,
  EndpointFields,
  EndpointPreview,
  EndpointSecretReveal,
  SignatureScheme,
} from './endpoint.types';

function isSignatureScheme(value: unknown): value is SignatureScheme {
  return value === 'hmac' || value === 'ed25519';
}

type Checked<T> = { ok: true; value: T } | { ok: false; result: ActionResult<never> };

/** The members create and update share, copied one by one so nothing unexpected reaches the API. */
function checkFields(input: unknown): Checked<EndpointFields & { filter: string | null; transform: string | null }> {
  const fail = (field: string, message: string) => ({ ok: false as const, result: invalidArgument(field, message) });
  if (!isObject(input)) return fail('body', 'the endpoint must be an object');
  const { url, name, description, events, filter, transform, metadata } = input;
  const { ratePerSecond, maxConcurrency, retryDelaysSeconds, timeoutSeconds, ordering, orderingOnFailure } = input;
  if (url !== undefined && typeof url !== 'string') return fail('url', 'url must be a string');
  if (typeof name !== 'string') return fail('name', 'name must be a string');
  if (typeof description !== 'string') return fail('description', 'description must be a string');
  if (!isStringArray(events)) return fail('events', 'events must be a list of patterns');
  if (!isNullableString(filter)) return fail('filter', 'filter must be JSON text or null');
  if (!isNullableString(transform)) return fail('transform', 'transform must be JSON text or null');
  if (!isInteger(ratePerSecond)) return fail('rate_per_second', 'must be a whole number');
  if (!isInteger(maxConcurrency)) return fail('max_concurrency', 'must be a whole number');
  if (!isInteger(timeoutSeconds)) return fail('timeout_seconds', 'must be a whole number');
  if (ordering !== 'none' && ordering !== 'ordered') return fail('ordering', 'ordering must be none or ordered');
  if (orderingOnFailure !== 'continue' && orderingOnFailure !== 'hold')
    return fail('ordering_on_failure', 'ordering_on_failure must be continue or hold');
  if (!isIntegerArray(retryDelaysSeconds)) return fail('retry_delays_seconds', 'must be whole numbers of seconds');
  if (!isStringRecord(metadata)) return fail('metadata', 'metadata must map keys to text');
  return {
    ok: true,
    value: {
      ...(url === undefined ? {} : { url }),
      name,
      description,
      events,
      filter,
      transform,
      ratePerSecond,
      maxConcurrency,
      ordering,
      orderingOnFailure,
      retryDelaysSeconds,
      timeoutSeconds,
      metadata,
    },
  };
}

export async function createEndpointAction(
  input: CreateEndpointInput,
  idempotencyKey: string,
): Promise<ActionResult<EndpointSecretReveal>> {
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  const fields = checkFields(input);
  if (!fields.ok) return fields.result;
  if (typeof input.tenantId !== 'string') return invalidArgument('tenant_id', 'tenant_id must be a string');
  if (input.status !== 'enabled' && input.status !== 'paused')
    return invalidArgument('status', 'status must be enabled or paused');
  if (!isStringRecord(input.headers)) return invalidArgument('headers', 'headers must map names to text');
  if (!isNullableString(input.authorization))
    return invalidArgument('authorization', 'authorization must be text or null');
  if (!isSignatureScheme(input.signatureScheme))
    return invalidArgument('signature_scheme', 'signature_scheme must be hmac or ed25519');
  if (input.deliveryMode !== 'push' && input.deliveryMode !== 'stream')
    return invalidArgument('delivery_mode', 'delivery_mode must be push or stream');
  return toActionResult(() =>
    createEndpoint(
      {
        ...fields.value,
        tenantId: input.tenantId,
        deliveryMode: input.deliveryMode,
        signatureScheme: input.signatureScheme,
        status: input.status,
        headers: input.headers,
        authorization: input.authorization,
      },
      idempotencyKey,
    ),
  );
}

export async function updateEndpointAction(
  id: string,
  etag: string,
  input: EndpointChanges,
): Promise<ActionResult<Endpoint>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  const fields = checkFields(input);
  if (!fields.ok) return fields.result;
  const changes: EndpointChanges = { ...fields.value };
  if (input.headers !== undefined) {
    if (!isStringRecord(input.headers)) return invalidArgument('headers', 'headers must map names to text');
    changes.headers = input.headers;
  }
  if (input.authorization !== undefined) {
    if (!isNullableString(input.authorization))
      return invalidArgument('authorization', 'authorization must be text or null');
    changes.authorization = input.authorization;
  }
  return toActionResult(() => updateEndpoint(id, etag, changes));
}

export async function setEndpointStatusAction(
  id: string,
  etag: string,
  status: 'enabled' | 'paused',
): Promise<ActionResult<Endpoint>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  if (status !== 'enabled' && status !== 'paused') return invalidArgument('status', 'status must be enabled or paused');
  return toActionResult(() => updateEndpoint(id, etag, { status }));
}

export async function resumeEndpointAction(
  id: string,
  etag: string,
  idempotencyKey: string,
): Promise<ActionResult<Endpoint>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => resumeEndpoint(id, etag, idempotencyKey));
}

export async function rotateEndpointSecretAction(
  id: string,
  etag: string,
  overlapSeconds: number,
  signatureScheme: SignatureScheme,
  idempotencyKey: string,
): Promise<ActionResult<EndpointSecretReveal>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  if (!isInteger(overlapSeconds)) return invalidArgument('overlap_seconds', 'must be a whole number of seconds');
  if (!isSignatureScheme(signatureScheme))
    return invalidArgument('signature_scheme', 'signature_scheme must be hmac or ed25519');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => rotateEndpointSecret(id, etag, overlapSeconds, signatureScheme, idempotencyKey));
}

export async function deleteEndpointAction(id: string, etag: string): Promise<ActionResult<null>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  return toActionResult(async () => {
    await deleteEndpoint(id, etag);
    return null;
  });
}

export async function previewEndpointAction(
  id: string,
  payload: string,
  eventType: string,
): Promise<ActionResult<EndpointPreview>> {
  if (typeof id !== 'string') return invalidArgument('id', 'id must be a string');
  if (typeof payload !== 'string') return invalidArgument('payload', 'payload must be JSON text');
  if (typeof eventType !== 'string') return invalidArgument('event_type', 'event_type must be a string');
  return toActionResult(() => previewEndpoint(id, payload, eventType.trim() || null));
}
