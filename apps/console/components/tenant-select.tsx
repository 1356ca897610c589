'use client';

import { Select, type ComboboxItem, type OptionsFilter } from '@mantine/core';

export interface TenantChoice {
  id: string;
  externalId: string;
  name: string;
}

/** The tenants a picker offers; `complete` is false when the team has more than it lists. */
export interface TenantChoices {
  options: TenantChoice[];
  complete: boolean;
}

interface TenantSelectProps {
  tenants: TenantChoices;
  value: string | null;
  onChange: (tenantId: string | null) => void;
  label?: string;
  description?: string;
  placeholder?: string;
  error?: string | undefined;
  required?: boolean;
  clearable?: boolean;
  disabled?: boolean;
  name?: string;
  w?: number;
}

const optionLabel = (tenant: TenantChoice) => `${tenant.name} (${tenant.externalId})`;

/** Matches a search against the tenant's name, external ID or tenant ID, ignoring case. */
function filterBy(tenants: readonly TenantChoice[]): OptionsFilter {
  const byId = new Map(tenants.map((tenant) => [tenant.id, tenant]));
  return ({ options, search }) => {
    const needle = search.trim().toLowerCase();
    if (needle === '') return options;
    return (options as ComboboxItem[]).filter((option) => {
      const tenant = byId.get(option.value);
      return [tenant?.name, tenant?.externalId, tenant?.id].some((text) => text?.toLowerCase().includes(needle));
    });
  };
}

/** Picks a tenant by name (or external ID, or ID) from the team's tenants; the value is the tenant ID. */
export function TenantSelect({
  tenants: { options: tenants, complete },
  value,
  onChange,
  label = 'Tenant',
  description,
  placeholder = 'Type a name or external ID',
  error,
  required,
  clearable,
  disabled,
  name,
  w,
}: TenantSelectProps) {
  const cap = complete ? '' : ` Only the first ${tenants.length} tenants are listed.`;
  return (
    <Select
      label={label}
      description={description !== undefined || cap !== '' ? `${description ?? ''}${cap}`.trim() : undefined}
      placeholder={placeholder}
      data={tenants.map((tenant) => ({ value: tenant.id, label: optionLabel(tenant) }))}
      value={value}
      onChange={onChange}
      filter={filterBy(tenants)}
      searchable
      clearable={clearable}
      required={required}
      disabled={disabled}
      error={error}
      name={name}
      w={w}
      nothingFoundMessage="No tenant matches"
      maxDropdownHeight={280}
      limit={200}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
