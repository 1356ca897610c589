'use client';

import { useRouter } from 'next/navigation';
import { listHref } from '@/lib/list-href';
import { TenantSelect, type TenantChoices } from './tenant-select';

interface TenantFilterProps {
  /** The list page the filter applies to (/endpoints, /sources). */
  path: string;
  tenants: TenantChoices;
  value: string | null;
}

/** Narrows a list to one tenant, picked by name; kept in the URL so it survives paging and reloads. */
export function TenantFilter({ path, tenants, value }: TenantFilterProps) {
  const router = useRouter();
  return (
    <TenantSelect
      tenants={tenants}
      value={value}
      onChange={(tenantId) => router.push(listHref(path, { tenant: tenantId }))}
      label="Tenant"
      placeholder="All tenants: type a name or external ID"
      clearable
      w={420}
    />
  );
}
