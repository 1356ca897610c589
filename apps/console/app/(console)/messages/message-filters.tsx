'use client';

import { useState } from 'react';
import { Select, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { CreatedWindowInputs } from '@/components/created-window-inputs';
import { FilterBar } from '@/components/filter-bar';
import { MONO_INPUT, TenantFilterField } from '@/components/scope-filter-fields';
import type { TenantChoices } from '@/components/tenant-select';
import { MESSAGE_STATUSES, type MessageSearch } from './message.types';

interface MessageFiltersProps {
  search: MessageSearch;
  tenants: TenantChoices | null;
  /** The API's refusal of a filter, shown at its field. */
  error: ApiError | null;
}

export function MessageFilters({ search, tenants, error }: MessageFiltersProps) {
  const [status, setStatus] = useState<string | null>(search.status || null);
  return (
    <FilterBar path="/messages" label="Find messages" active={Object.values(search).some((value) => value !== '')}>
      <CreatedWindowInputs
        createdAfter={search.createdAfter}
        createdBefore={search.createdBefore}
        afterError={fieldMessage(error, 'created_after')}
        beforeError={fieldMessage(error, 'created_before')}
      />
      <TenantFilterField tenants={tenants} defaultValue={search.tenant} error={fieldMessage(error, 'tenant_id')} />
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
        styles={MONO_INPUT}
      />
    </FilterBar>
  );
}
