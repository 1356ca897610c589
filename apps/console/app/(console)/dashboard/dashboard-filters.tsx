'use client';

import { useRouter } from 'next/navigation';
import { Group, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { listHref } from '@/lib/list-href';
import type { EndpointChoices } from '@/components/endpoint-select';
import { FilterBar } from '@/components/filter-bar';
import { EndpointFilterField, MONO_INPUT, TenantFilterField } from '@/components/scope-filter-fields';
import { SegmentedChoice } from '@/components/segmented-choice';
import type { TenantChoices } from '@/components/tenant-select';
import { WINDOWS, type DashboardSearch } from './analytics.types';

interface DashboardFiltersProps {
  search: DashboardSearch;
  tenants: TenantChoices | null;
  endpoints: EndpointChoices | null;
  tenantNames: ReadonlyMap<string, string>;
  error: ApiError | null;
}

/** The time window and bucket (applied at once) and the scope: the team, a tenant, an endpoint or a source. */
export function DashboardFilters({ search, tenants, endpoints, tenantNames, error }: DashboardFiltersProps) {
  const router = useRouter();
  const { window, bucket, ...scope } = search;
  return (
    <>
      <Group gap="lg">
        <SegmentedChoice
          label="Time window"
          value={window}
          // A new window starts with its natural bucket.
          onChange={(value) => router.push(listHref('/dashboard', { ...scope, window: value }))}
          data={WINDOWS.map((choice) => ({ value: choice.value, label: choice.label }))}
        />
        <SegmentedChoice
          label="Bucket"
          value={bucket}
          onChange={(value) => router.push(listHref('/dashboard', { ...scope, window, bucket: value }))}
          data={[
            { value: 'hour', label: 'Hour' },
            { value: 'day', label: 'Day' },
          ]}
        />
      </Group>
      <FilterBar
        path="/dashboard"
        clearHref={listHref('/dashboard', { window, bucket })}
        label="Dashboard scope"
        active={Object.values(scope).some((value) => value !== '')}
      >
        <input type="hidden" name="window" value={window} />
        <input type="hidden" name="bucket" value={bucket} />
        <TenantFilterField tenants={tenants} defaultValue={search.tenant} error={fieldMessage(error, 'tenant_id')} />
        <EndpointFilterField
          endpoints={endpoints}
          tenantNames={tenantNames}
          defaultValue={search.endpoint}
          error={fieldMessage(error, 'endpoint_id')}
        />
        <TextInput
          name="source"
          label="Source ID"
          placeholder="wds_..."
          defaultValue={search.source}
          error={fieldMessage(error, 'source_id')}
          w={240}
          styles={MONO_INPUT}
        />
      </FilterBar>
    </>
  );
}
