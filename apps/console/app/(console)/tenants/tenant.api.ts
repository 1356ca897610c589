import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import {
  TENANTS_PAGE_SIZE,
  type CreateTenantInput,
  type Tenant,
  type TenantInput,
  type TenantPage,
} from './tenant.types';

const TENANT_FIELDS = 'id externalId name metadata status etag createdAt';

export async function listTenants(args: {
  after: string | null;
  externalId: string | null;
  first?: number;
}): Promise<TenantPage> {
  const data = await consoleRequest<{ tenants: TenantPage }>(
    `query Tenants($first: Int, $after: String, $externalId: String) {
      tenants(first: $first, after: $after, externalId: $externalId) { nodes { ${TENANT_FIELDS} } nextCursor }
    }`,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: args.first ?? TENANTS_PAGE_SIZE,
      ...(args.after ? { after: args.after } : {}),
      ...(args.externalId ? { externalId: args.externalId } : {}),
    },
  );
  return data.tenants;
}

export async function getTenant(id: string): Promise<Tenant> {
  const data = await consoleRequest<{ tenant: Tenant }>(
    `query Tenant($id: ID!) { tenant(id: $id) { ${TENANT_FIELDS} } }`,
    { id },
  );
  return data.tenant;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot make a second tenant. */
export async function createTenant(input: CreateTenantInput, idempotencyKey: string | null): Promise<Tenant> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ createTenant: Tenant }>(
    `mutation CreateTenant($input: CreateTenantInput!${idem.declaration}) {
      createTenant(input: $input${idem.argument}) { ${TENANT_FIELDS} }
    }`,
    { input, ...idem.variables },
  );
  return data.createTenant;
}

export async function updateTenant(id: string, etag: string, input: TenantInput): Promise<Tenant> {
  const data = await consoleRequest<{ updateTenant: Tenant }>(
    `mutation UpdateTenant($id: ID!, $etag: String!, $input: UpdateTenantInput!) {
      updateTenant(id: $id, etag: $etag, input: $input) { ${TENANT_FIELDS} }
    }`,
    { id, etag, input },
  );
  return data.updateTenant;
}

export async function deleteTenant(id: string, etag: string): Promise<void> {
  await consoleRequest<{ deleteTenant: boolean }>(
    `mutation DeleteTenant($id: ID!, $etag: String!) { deleteTenant(id: $id, etag: $etag) }`,
    { id, etag },
  );
}
