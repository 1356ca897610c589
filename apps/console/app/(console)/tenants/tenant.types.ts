export interface Tenant {
  id: string;
  externalId: string;
  name: string;
  metadata: Record<string, string>;
  /** active or deleted */
  status: string;
  etag: string;
  createdAt: string;
}

export interface TenantPage {
  nodes: Tenant[];
  nextCursor: string | null;
}

export interface TenantInput {
  name: string;
  metadata: Record<string, string>;
}

export interface CreateTenantInput extends TenantInput {
  externalId: string;
}

export const TENANTS_PAGE_SIZE = 20;
