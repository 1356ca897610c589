'use client';

import { useRouter } from 'next/navigation';
import { Group, Switch, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { listHref } from '@/lib/list-href';
import { CreatedWindowInputs } from '@/components/created-window-inputs';
import type { EndpointChoices } from '@/components/endpoint-select';
import { FilterBar } from '@/components/filter-bar';
import { EndpointFilterField, TenantFilterField } from '@/components/scope-filter-fields';
import { SegmentedChoice } from '@/components/segmented-choice';
import type { TenantChoices } from '@/components/tenant-select';
import type { DeadLetterSearch } from './dead-letter.types';

interface DeadLetterFiltersProps {
  search: DeadLetterSearch;
  tenants: TenantChoices | null;
  endpoints: EndpointChoices | null;
  tenantNames: ReadonlyMap<string, string>;
  error: ApiError | null;
}

export function DeadLetterFilters({ search, tenants, endpoints, tenantNames, error }: DeadLetterFiltersProps) {
  const router = useRouter();
  const { status, repaired, ...filters } = search;
  return (
    <>
      <Group align="flex-end" gap="xl">
        <SegmentedChoice
          label="Show"
          ariaLabel="Status of the dead letters"
          value={status}
          onChange={(value) => router.push(listHref('/dead-letters', { ...filters, repaired, status: value }))}
          data={[
            { value: 'failed', label: 'Failed' },
            { value: 'expired', label: 'Expired' },
          ]}
        />
        <Switch
          label="Hide repaired"
          description="Dead letters a later replay already delivered"
          checked={repaired !== 'show'}
          onChange={(event) =>
            router.push(
              listHref('/dead-letters', { ...filters, status, repaired: event.currentTarget.checked ? '' : 'show' }),
            )
          }
          mb={4}
        />
      </Group>
      <FilterBar
        path="/dead-letters"
        clearHref={listHref('/dead-letters', { status, repaired })}
        label="Find dead letters"
        active={Object.values(filters).some((value) => value !== '')}
      >
        <input type="hidden" name="status" value={status} />
        {repaired && <input type="hidden" name="repaired" value={repaired} />}
        <CreatedWindowInputs
          createdAfter={search.createdAfter}
          createdBefore={search.createdBefore}
          afterError={fieldMessage(error, 'created_after')}
          beforeError={fieldMessage(error, 'created_before')}
        />
        <TenantFilterField tenants={tenants} defaultValue={search.tenant} error={fieldMessage(error, 'tenant_id')} />
        <EndpointFilterField
          endpoints={endpoints}
          tenantNames={tenantNames}
          defaultValue={search.endpoint}
          error={fieldMessage(error, 'endpoint_id')}
        />
        <TextInput
          name="eventType"
          label="Event type"
          placeholder="Exact name"
          defaultValue={search.eventType}
          error={fieldMessage(error, 'event_type')}
          w={200}
        />
        <TextInput
          name="sequence"
          label="Sequence"
          placeholder="Ordered endpoints"
          inputMode="numeric"
          defaultValue={search.sequence}
          error={fieldMessage(error, 'sequence')}
          w={140}
        />
      </FilterBar>
    </>
  );
}
