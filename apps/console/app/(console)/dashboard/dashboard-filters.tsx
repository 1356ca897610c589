'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { Group, Input, SegmentedControl, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { listHref } from '@/lib/list-href';
import { EndpointSelect, type EndpointChoices } from '@/components/endpoint-select';
import { FilterBar } from '@/components/filter-bar';
import { TenantSelect, type TenantChoices } from '@/components/tenant-select';
import { WINDOWS, type DashboardSearch } from './analytics.types';

interface DashboardFiltersProps {
  search: DashboardSearch;
  tenants: TenantChoices | null;
  endpoints: EndpointChoices | null;
  tenantNames: ReadonlyMap<string, string>;
  error: ApiError | null;
}

const mono = { input: { fontFamily: 'var(--mantine-font-family-monospace)' } };

/** The time window and bucket (applied at once) and the scope: the team, a tenant, an endpoint or a source. */
export function DashboardFilters({ search, tenants, endpoints, tenantNames, error }: DashboardFiltersProps) {
  const router = useRouter();
  const [tenant, setTenant] = useState<string | null>(search.tenant || null);
  const [endpoint, setEndpoint] = useState<string | null>(search.endpoint || null);
  const { window, bucket, ...scope } = search;
  return (
    <>
      <Group gap="lg">
        <Input.Wrapper label="Time window">
          <div>
            <SegmentedControl
              value={window}
              // A new window starts with its natural bucket.
              onChange={(value) => router.push(listHref('/dashboard', { ...scope, window: value }))}
              data={WINDOWS.map((choice) => ({ value: choice.value, label: choice.label }))}
              aria-label="Time window"
            />
          </div>
        </Input.Wrapper>
        <Input.Wrapper label="Bucket">
          <div>
            <SegmentedControl
              value={bucket}
              onChange={(value) => router.push(listHref('/dashboard', { ...scope, window, bucket: value }))}
              data={[
                { value: 'hour', label: 'Hour' },
                { value: 'day', label: 'Day' },
              ]}
              aria-label="Bucket"
            />
          </div>
        </Input.Wrapper>
      </Group>
      <FilterBar
        path="/dashboard"
        clearHref={listHref('/dashboard', { window, bucket })}
        label="Dashboard scope"
        active={Object.values(scope).some((value) => value !== '')}
      >
        <input type="hidden" name="window" value={window} />
        <input type="hidden" name="bucket" value={bucket} />
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
          name="source"
          label="Source ID"
          placeholder="wds_..."
          defaultValue={search.source}
          error={fieldMessage(error, 'source_id')}
          w={240}
          styles={mono}
        />
      </FilterBar>
    </>
  );
}
