import type { TenantFieldsFragment, TenantsQuery } from '@/gql/graphql';

export type Tenant = TenantFieldsFragment;

export type TenantPage = TenantsQuery['tenants'];

export interface TenantInput {
  name: string;
  metadata: Record<string, string>;
}

export interface CreateTenantInput extends TenantInput {
  externalId: string;
}

export const TENANTS_PAGE_SIZE = 20;
