'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isObject, isStringRecord } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { createTenant, deleteTenant, updateTenant } from './tenant.api';
import type { CreateTenantInput, Tenant, TenantInput } from './tenant.types';

export async function createTenantAction(
  input: CreateTenantInput,
  idempotencyKey: string,
): Promise<ActionResult<Tenant>> {
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  if (!isObject(input)) return invalidArgument('body', 'the tenant must be an object');
  if (typeof input.externalId !== 'string') return invalidArgument('external_id', 'external_id must be a string');
  if (typeof input.name !== 'string') return invalidArgument('name', 'name must be a string');
  if (!isStringRecord(input.metadata)) return invalidArgument('metadata', 'metadata must map keys to text');
  return toActionResult(() =>
    createTenant({ externalId: input.externalId, name: input.name, metadata: input.metadata }, idempotencyKey),
  );
}

export async function updateTenantAction(id: string, etag: string, input: TenantInput): Promise<ActionResult<Tenant>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  if (!isObject(input)) return invalidArgument('body', 'the tenant must be an object');
  if (typeof input.name !== 'string') return invalidArgument('name', 'name must be a string');
  if (!isStringRecord(input.metadata)) return invalidArgument('metadata', 'metadata must map keys to text');
  return toActionResult(() => updateTenant(id, etag, { name: input.name, metadata: input.metadata }));
}

export async function deleteTenantAction(id: string, etag: string): Promise<ActionResult<null>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  return toActionResult(async () => {
    await deleteTenant(id, etag);
    return null;
  });
}
