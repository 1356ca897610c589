import 'server-only';
import { listTenants } from './tenant.api';
import type { TenantPage } from './tenant.types';
import type { TenantChoice, TenantChoices } from '@/components/tenant-select';

/** Enough for any picker a person scrolls through; beyond it the picker says so (TenantSelect). */
export const TENANT_OPTIONS_CAP = 1000;
const PAGE = 200;

/** The team's active tenants for a picker, oldest first, at most TENANT_OPTIONS_CAP of them. */
export async function listTenantOptions(): Promise<TenantChoices> {
  const options: TenantChoice[] = [];
  let after: string | null = null;
  do {
    const page: TenantPage = await listTenants({ after, externalId: null, first: PAGE });
    for (const tenant of page.nodes)
      if (tenant.status === 'active') options.push({ id: tenant.id, externalId: tenant.externalId, name: tenant.name });
    after = page.nextCursor;
  } while (after !== null && options.length < TENANT_OPTIONS_CAP);
  return { options, complete: after === null };
}
