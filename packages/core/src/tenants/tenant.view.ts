import { etagFor } from '../common/etag.js';
import type { TenantEntity, TenantStatus } from './tenant.entity.js';

/** What reads show of a tenant; transports render it, never the entity. */
export interface TenantView {
  id: string;
  externalId: string;
  name: string;
  metadata: Record<string, string>;
  status: TenantStatus;
  version: string;
  etag: string;
  createdAt: Date;
  updatedAt: Date;
}

export function toTenantView(tenant: TenantEntity): TenantView {
  return {
    id: tenant.id,
    externalId: tenant.externalId,
    name: tenant.name,
    metadata: tenant.metadata,
    status: tenant.status,
    version: tenant.version,
    etag: etagFor(tenant.id, tenant.version),
    createdAt: tenant.createdAt,
    updatedAt: tenant.updatedAt,
  };
}
