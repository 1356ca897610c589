'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isInteger, isNullableString, isObject, isStringRecord } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { createSource, deleteSource, rotateSourceSecret, rotateSourceToken, updateSource } from './source.api';
import type { CreateSourceInput, EventTypeMapping, Source, SourceChanges, SourceReveal } from './source.types';

type Checked<T> = { ok: true; value: T } | { ok: false; result: ActionResult<never> };

function fail(field: string, message: string): { ok: false; result: ActionResult<never> } {
  return { ok: false, result: invalidArgument(field, message) };
}

/** The mapping, copied member by member so nothing unexpected reaches the API. */
function checkMapping(input: Record<string, unknown>): Checked<EventTypeMapping> {
  const { eventType, eventTypePath, eventTypePrefix } = input;
  if (typeof eventType === 'string' && eventTypePath === undefined) return { ok: true, value: { eventType } };
  if (typeof eventTypePath === 'string' && eventType === undefined && isNullableString(eventTypePrefix))
    return { ok: true, value: { eventTypePath, eventTypePrefix } };
  return fail('event_type', 'give either eventType or eventTypePath (with eventTypePrefix)');
}

function checkIds(id: unknown, etag: unknown): ActionResult<never> | null {
  return typeof id === 'string' && typeof etag === 'string'
    ? null
    : invalidArgument('id', 'id and etag must be strings');
}

export async function createSourceAction(
  input: CreateSourceInput,
  idempotencyKey: string,
): Promise<ActionResult<SourceReveal>> {
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  if (!isObject(input)) return invalidArgument('body', 'the source must be an object');
  const { tenantId, name, verification, billingKeyId, metadata } = input;
  if (typeof tenantId !== 'string') return invalidArgument('tenant_id', 'tenant_id must be a string');
  if (typeof name !== 'string') return invalidArgument('name', 'name must be a string');
  if (!isObject(verification)) return invalidArgument('verification', 'verification must be an object');
  if (billingKeyId !== undefined && typeof billingKeyId !== 'string')
    return invalidArgument('billing_key_id', 'billing_key_id must be a string');
  if (!isStringRecord(metadata)) return invalidArgument('metadata', 'metadata must map keys to text');
  const mapping = checkMapping(input);
  if (!mapping.ok) return mapping.result;
  return toActionResult(() =>
    createSource(
      {
        tenantId,
        name,
        verification,
        ...mapping.value,
        ...(billingKeyId === undefined ? {} : { billingKeyId }),
        metadata,
      },
      idempotencyKey,
    ),
  );
}

export async function updateSourceAction(
  id: string,
  etag: string,
  input: SourceChanges,
): Promise<ActionResult<Source>> {
  const ids = checkIds(id, etag);
  if (ids) return ids;
  if (!isObject(input)) return invalidArgument('body', 'the changes must be an object');
  const { name, verification, billingKeyId, metadata } = input;
  if (typeof name !== 'string') return invalidArgument('name', 'name must be a string');
  if (verification !== undefined && !isObject(verification))
    return invalidArgument('verification', 'verification must be an object');
  if (billingKeyId !== undefined && typeof billingKeyId !== 'string')
    return invalidArgument('billing_key_id', 'billing_key_id must be a string');
  if (!isStringRecord(metadata)) return invalidArgument('metadata', 'metadata must map keys to text');
  const mapping = checkMapping(input);
  if (!mapping.ok) return mapping.result;
  return toActionResult(() =>
    updateSource(id, etag, {
      name,
      ...mapping.value,
      ...(verification === undefined ? {} : { verification }),
      ...(billingKeyId === undefined ? {} : { billingKeyId }),
      metadata,
    }),
  );
}

export async function setSourceStatusAction(
  id: string,
  etag: string,
  status: 'active' | 'paused',
): Promise<ActionResult<Source>> {
  const ids = checkIds(id, etag);
  if (ids) return ids;
  if (status !== 'active' && status !== 'paused') return invalidArgument('status', 'status must be active or paused');
  return toActionResult(() => updateSource(id, etag, { status }));
}

export async function deleteSourceAction(id: string, etag: string): Promise<ActionResult<null>> {
  const ids = checkIds(id, etag);
  if (ids) return ids;
  return toActionResult(async () => {
    await deleteSource(id, etag);
    return null;
  });
}

export async function rotateSourceSecretAction(
  id: string,
  etag: string,
  args: { secret: string | null; overlapSeconds: number },
  idempotencyKey: string,
): Promise<ActionResult<SourceReveal>> {
  const ids = checkIds(id, etag);
  if (ids) return ids;
  if (!isObject(args)) return invalidArgument('body', 'the rotation must be an object');
  if (!isNullableString(args.secret)) return invalidArgument('secret', 'secret must be text or null');
  if (!isInteger(args.overlapSeconds)) return invalidArgument('overlap_seconds', 'must be a whole number of seconds');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() =>
    rotateSourceSecret(id, etag, { secret: args.secret, overlapSeconds: args.overlapSeconds }, idempotencyKey),
  );
}

export async function rotateSourceTokenAction(
  id: string,
  etag: string,
  overlapSeconds: number,
  idempotencyKey: string,
): Promise<ActionResult<SourceReveal>> {
  const ids = checkIds(id, etag);
  if (ids) return ids;
  if (!isInteger(overlapSeconds)) return invalidArgument('overlap_seconds', 'must be a whole number of seconds');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => rotateSourceToken(id, etag, overlapSeconds, idempotencyKey));
}
