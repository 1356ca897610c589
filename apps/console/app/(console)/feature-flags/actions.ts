'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isObject } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { createEnvironment, deleteFlag, putFlag } from './flag.api';
import type { Environment, Flag, FlagInput } from './flag.types';

export async function createEnvironmentAction(
  name: string,
  idempotencyKey: string,
): Promise<ActionResult<Environment>> {
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  if (typeof name !== 'string') return invalidArgument('name', 'name must be a string');
  return toActionResult(() => createEnvironment(name, idempotencyKey));
}

/** Creates or replaces a flag; `idempotencyKey` is null for a toggle (its etag makes a repeat harmless). */
export async function putFlagAction(
  environmentId: string,
  input: FlagInput,
  idempotencyKey: string | null,
): Promise<ActionResult<Flag>> {
  if (typeof environmentId !== 'string') return invalidArgument('environment_id', 'environment_id must be a string');
  if (idempotencyKey !== null && !isIdempotencyKey(idempotencyKey))
    return invalidArgument('idempotency_key', 'not a valid idempotency key');
  if (!isObject(input)) return invalidArgument('body', 'the flag must be an object');
  const { key, enabled, description, value, etag } = input;
  if (typeof key !== 'string') return invalidArgument('flag_key', 'key must be a string');
  if (typeof enabled !== 'boolean') return invalidArgument('enabled', 'enabled must be true or false');
  if (typeof description !== 'string') return invalidArgument('description', 'description must be a string');
  if (typeof value !== 'string') return invalidArgument('value', 'value must be JSON text');
  if (etag !== null && typeof etag !== 'string') return invalidArgument('etag', 'etag must be a string');
  return toActionResult(() =>
    putFlag(environmentId, { key, enabled, description, value, etag }, idempotencyKey ?? null),
  );
}

export async function deleteFlagAction(environmentId: string, key: string, etag: string): Promise<ActionResult<true>> {
  if (typeof environmentId !== 'string' || typeof key !== 'string' || typeof etag !== 'string')
    return invalidArgument('flag_key', 'environment, key and etag must be strings');
  return toActionResult(async () => {
    await deleteFlag(environmentId, key, etag);
    return true as const;
  });
}
