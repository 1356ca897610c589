'use client';

import { useState } from 'react';
import { Select, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { FilterBar } from '@/components/filter-bar';
import { MONO_INPUT, TenantFilterField } from '@/components/scope-filter-fields';
import type { TenantChoices } from '@/components/tenant-select';
import { OPERATIONAL_EVENT_TYPES, type EventFilters } from './event.types';

interface EventFiltersFormProps {
  filters: EventFilters;
  tenants: TenantChoices | null;
  error: ApiError | null;
}

/** The URL names the filters type, resource and tenant. */
export function EventFiltersForm({ filters, tenants, error }: EventFiltersFormProps) {
  const [type, setType] = useState<string | null>(filters.type || null);
  return (
    <FilterBar path="/events" label="Find events" active={Object.values(filters).some((value) => value !== '')}>
      <Select
        name="type"
        label="Type"
        placeholder="Every type"
        data={[...OPERATIONAL_EVENT_TYPES]}
        value={type}
        onChange={setType}
        clearable
        error={fieldMessage(error, 'type')}
        w={280}
        comboboxProps={{ withinPortal: true }}
      />
      <TextInput
        name="resource"
        label="Resource ID"
        placeholder="wdd_..., wde_..."
        description="Also finds bursts that ended with it"
        defaultValue={filters.resourceId}
        error={fieldMessage(error, 'resource_id')}
        w={280}
        styles={MONO_INPUT}
      />
      <TenantFilterField tenants={tenants} defaultValue={filters.tenantId} error={fieldMessage(error, 'tenant_id')} />
    </FilterBar>
  );
}
