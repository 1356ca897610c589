'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { Group, Input, SegmentedControl, Switch, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { listHref } from '@/lib/list-href';
import { CreatedWindowInputs } from '@/components/created-window-inputs';
import { EndpointSelect, type EndpointChoices } from '@/components/endpoint-select';
import { FilterBar } from '@/components/filter-bar';
import { TenantSelect, type TenantChoices } from '@/components/tenant-select';
import type { DeadLetterSearch } from './dead-letter.types';

interface DeadLetterFiltersProps {
  search: DeadLetterSearch;
  tenants: TenantChoices | null;
  endpoints: EndpointChoices | null;
  tenantNames: ReadonlyMap<string, string>;
  error: ApiError | null;
}

const mono = { input: { fontFamily: 'var(--mantine-font-family-monospace)' } };

export function DeadLetterFilters({ search, tenants, endpoints, tenantNames, error }: DeadLetterFiltersProps) {
  const router = useRouter();
  const [tenant, setTenant] = useState<string | null>(search.tenant || null);
  const [endpoint, setEndpoint] = useState<string | null>(search.endpoint || null);
  const { status, repaired, ...filters } = search;
  return (
    <>
      <Group align="flex-end" gap="xl">
        <Input.Wrapper label="Show">
          <div>
            <SegmentedControl
              value={status}
              onChange={(value) => router.push(listHref('/dead-letters', { ...filters, repaired, status: value }))}
              data={[
                { value: 'failed', label: 'Failed' },
                { value: 'expired', label: 'Expired' },
              ]}
              aria-label="Status of the dead letters"
            />
          </div>
        </Input.Wrapper>
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
        {endpoints ? (
          <EndpointSelect
            endpoints={endpoints}
            tenantNames={tenantNames}
            value={endpoint}
            onChange={setEndpoint}
            name="endpoint"
            error={fieldMessage(error, 'endpoint_id')}
            w={300}
          />
        ) : (
          <TextInput name="endpoint" label="Endpoint ID" defaultValue={search.endpoint} w={260} styles={mono} />
        )}
        <TextInput
          name="eventType"
          label="Event type"
          placeholder="Exact name"
          defaultValue={search.eventType}
          error={fieldMessage(error, 'event_type')}
          w={200}
        />
      </FilterBar>
    </>
  );
}
