'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { createStreamToken, revokeStreamToken } from './stream.api';
import type { StreamTokenReveal } from './stream.types';

export async function createStreamTokenAction(
  endpointId: string,
  name: string,
  idempotencyKey: string,
): Promise<ActionResult<StreamTokenReveal>> {
  if (typeof endpointId !== 'string') return invalidArgument('endpoint_id', 'endpoint_id must be a string');
  if (typeof name !== 'string') return invalidArgument('name', 'name must be a string');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return toActionResult(() => createStreamToken(endpointId, name.trim() || null, idempotencyKey));
}

export async function revokeStreamTokenAction(endpointId: string, tokenId: string): Promise<ActionResult<null>> {
  if (typeof endpointId !== 'string' || typeof tokenId !== 'string')
    return invalidArgument('id', 'endpoint_id and id must be strings');
  return toActionResult(async () => {
    await revokeStreamToken(endpointId, tokenId);
    return null;
  });
}
