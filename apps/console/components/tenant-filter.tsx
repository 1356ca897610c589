'use client';

import { useRouter } from 'next/navigation';
import { TenantSelect, type TenantChoices } from '@/components/tenant-select';
import { listHref } from '@/lib/list-href';

/** Narrows the endpoint list to one tenant, picked by name; kept in the URL so it survives paging and reloads. */
export function TenantFilter({ tenants, value }: { tenants: TenantChoices; value: string | null }) {
  const router = useRouter();
  return (
    <TenantSelect
      tenants={tenants}
      value={value}
      onChange={(tenantId) => router.push(listHref('/endpoints', { tenant: tenantId }))}
      label="Tenant"
      placeholder="All tenants: type a name or external ID"
      clearable
      w={420}
    />
  );
}
