import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  TENANTS_PAGE_SIZE,
  type CreateTenantInput,
  type Tenant,
  type TenantInput,
  type TenantPage,
} from './tenant.types';

graphql(`
  fragment TenantFields on Tenant {
    id
    externalId
    name
    metadata
    status
    etag
    createdAt
  }
`);

const TenantsQuery = graphql(`
  query Tenants($first: Int, $after: String, $externalId: String) {
    tenants(first: $first, after: $after, externalId: $externalId) {
      nodes {
        ...TenantFields
      }
      nextCursor
    }
  }
`);

const TenantQuery = graphql(`
  query Tenant($id: ID!) {
    tenant(id: $id) {
      ...TenantFields
    }
  }
`);

const CreateTenantMutation = graphql(`
  mutation CreateTenant($input: CreateTenantInput!, $idempotencyKey: String) {
    createTenant(input: $input, idempotencyKey: $idempotencyKey) {
      ...TenantFields
    }
  }
`);

const UpdateTenantMutation = graphql(`
  mutation UpdateTenant($id: ID!, $etag: String!, $input: UpdateTenantInput!) {
    updateTenant(id: $id, etag: $etag, input: $input) {
      ...TenantFields
    }
  }
`);

const DeleteTenantMutation = graphql(`
  mutation DeleteTenant($id: ID!, $etag: String!) {
    deleteTenant(id: $id, etag: $etag)
  }
`);

export async function listTenants(args: {
  after: string | null;
  externalId: string | null;
  first?: number;
}): Promise<TenantPage> {
  const data = await consoleRequest(
    TenantsQuery,
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
  const data = await consoleRequest(TenantQuery, { id });
  return data.tenant;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot make a second tenant. */
export async function createTenant(input: CreateTenantInput, idempotencyKey: string | null): Promise<Tenant> {
  const data = await consoleRequest(CreateTenantMutation, { input, ...idempotencyVariable(idempotencyKey) });
  return data.createTenant;
}

export async function updateTenant(id: string, etag: string, input: TenantInput): Promise<Tenant> {
  const data = await consoleRequest(UpdateTenantMutation, { id, etag, input });
  return data.updateTenant;
}

export async function deleteTenant(id: string, etag: string): Promise<void> {
  await consoleRequest(DeleteTenantMutation, { id, etag });
}
