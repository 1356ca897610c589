'use client';

import { useState } from 'react';
import { TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { EndpointSelect, type EndpointChoices } from '@/components/endpoint-select';
import { FilterBar } from '@/components/filter-bar';

interface ReplayFiltersProps {
  endpoint: string;
  endpoints: EndpointChoices | null;
  tenantNames: ReadonlyMap<string, string>;
  error: ApiError | null;
}

/** The replays list's one filter: the endpoint (an ID field when the endpoints could not be listed). */
export function ReplayFilters({ endpoint, endpoints, tenantNames, error }: ReplayFiltersProps) {
  const [picked, setPicked] = useState<string | null>(endpoint || null);
  return (
    <FilterBar path="/replays" label="Find replays" active={endpoint !== ''}>
      {endpoints ? (
        <EndpointSelect
          endpoints={endpoints}
          tenantNames={tenantNames}
          value={picked}
          onChange={setPicked}
          name="endpoint"
          error={fieldMessage(error, 'endpoint_id')}
          w={320}
        />
      ) : (
        <TextInput
          name="endpoint"
          label="Endpoint ID"
          defaultValue={endpoint}
          error={fieldMessage(error, 'endpoint_id')}
          w={260}
        />
      )}
    </FilterBar>
  );
}
