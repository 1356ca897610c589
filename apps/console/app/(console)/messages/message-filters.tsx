'use client';

import { useState } from 'react';
import { Select, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { CreatedWindowInputs } from '@/components/created-window-inputs';
import { FilterBar } from '@/components/filter-bar';
import { TenantSelect, type TenantChoices } from '@/components/tenant-select';
import { MESSAGE_STATUSES, type MessageSearch } from './message.types';

interface MessageFiltersProps {
  search: MessageSearch;
  tenants: TenantChoices | null;
  /** The API's refusal of a filter, shown at its field. */
  error: ApiError | null;
}

export function MessageFilters({ search, tenants, error }: MessageFiltersProps) {
  const [tenant, setTenant] = useState<string | null>(search.tenant || null);
  const [status, setStatus] = useState<string | null>(search.status || null);
  const mono = { input: { fontFamily: 'var(--mantine-font-family-monospace)' } };
  return (
    <FilterBar path="/messages" label="Find messages" active={Object.values(search).some((value) => value !== '')}>
      <CreatedWindowInputs
        createdAfter={search.createdAfter}
        createdBefore={search.createdBefore}
        afterError={fieldMessage(error, 'created_after')}
        beforeError={fieldMessage(error, 'created_before')}
      />
      {tenants ? (
        <TenantSelect
          tenants={tenants}
          value={tenant}
          onChange={setTenant}
          name="tenant"
          placeholder="All tenants"
          clearable
          error={fieldMessage(error, 'tenant_id')}
          w={260}
        />
      ) : (
        <TextInput name="tenant" label="Tenant ID" defaultValue={search.tenant} w={260} styles={mono} />
      )}
      <TextInput
        name="eventType"
        label="Event type"
        placeholder="Exact name"
        defaultValue={search.eventType}
        error={fieldMessage(error, 'event_type')}
        w={200}
      />
      <Select
        name="status"
        label="Status"
        placeholder="Any status"
        data={[...MESSAGE_STATUSES]}
        value={status}
        onChange={setStatus}
        clearable
        error={fieldMessage(error, 'status')}
        w={170}
        comboboxProps={{ withinPortal: true }}
      />
      <TextInput
        name="externalId"
        label="External ID"
        defaultValue={search.externalId}
        error={fieldMessage(error, 'external_id')}
        w={200}
      />
      <TextInput
        name="sourceId"
        label="Source ID"
        placeholder="wds_..."
        defaultValue={search.sourceId}
        error={fieldMessage(error, 'source_id')}
        w={200}
        styles={mono}
      />
    </FilterBar>
  );
}
