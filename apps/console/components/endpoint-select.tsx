'use client';

import { Select } from '@mantine/core';

export interface EndpointChoice {
  id: string;
  name: string;
  tenantId: string;
}

/** The endpoints a picker offers; `complete` is false when the team has more than it lists. */
export interface EndpointChoices {
  options: EndpointChoice[];
  complete: boolean;
}

interface EndpointSelectProps {
  endpoints: EndpointChoices;
  /** Names by tenant ID, so endpoints of the same name tell their tenants apart. */
  tenantNames: ReadonlyMap<string, string>;
  value: string | null;
  onChange: (endpointId: string | null) => void;
  name?: string;
  error?: string | undefined;
  w?: number;
}

/** Picks an endpoint by its name, its tenant's name or its ID; the value is the endpoint ID. */
export function EndpointSelect({ endpoints, tenantNames, value, onChange, name, error, w }: EndpointSelectProps) {
  const cap = endpoints.complete ? undefined : `Only the first ${endpoints.options.length} endpoints are listed.`;
  return (
    <Select
      label="Endpoint"
      description={cap}
      placeholder="All endpoints"
      data={endpoints.options.map((endpoint) => ({
        value: endpoint.id,
        label: `${endpoint.name} (${tenantNames.get(endpoint.tenantId) ?? endpoint.tenantId})`,
      }))}
      value={value}
      onChange={onChange}
      searchable
      clearable
      name={name}
      error={error}
      w={w}
      nothingFoundMessage="No endpoint matches"
      maxDropdownHeight={280}
      limit={200}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
