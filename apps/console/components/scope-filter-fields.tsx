'use client';

import { useState } from 'react';
import { TextInput } from '@mantine/core';
import { EndpointSelect, type EndpointChoices } from './endpoint-select';
import { TenantSelect, type TenantChoices } from './tenant-select';

/** Inputs that take IDs (wdt_..., wds_...) read better in a monospace font. */
export const MONO_INPUT = { input: { fontFamily: 'var(--mantine-font-family-monospace)' } };

interface TenantFilterFieldProps {
  /** The tenants to pick from; null when they could not be read, so an ID is typed instead. */
  tenants: TenantChoices | null;
  /** The tenant ID the URL holds, or ''. */
  defaultValue: string;
  error?: string | undefined;
}

/** The `tenant` field of a FilterBar: picked by name, or typed as an ID when the tenants could not be read. */
export function TenantFilterField({ tenants, defaultValue, error }: TenantFilterFieldProps) {
  const [tenant, setTenant] = useState<string | null>(defaultValue || null);
  if (!tenants)
    return <TextInput name="tenant" label="Tenant ID" defaultValue={defaultValue} w={260} styles={MONO_INPUT} />;
  return (
    <TenantSelect
      tenants={tenants}
      value={tenant}
      onChange={setTenant}
      name="tenant"
      placeholder="All tenants"
      clearable
      error={error}
      w={260}
    />
  );
}

interface EndpointFilterFieldProps {
  /** The endpoints to pick from; null when they could not be read, so an ID is typed instead. */
  endpoints: EndpointChoices | null;
  tenantNames: ReadonlyMap<string, string>;
  /** The endpoint ID the URL holds, or ''. */
  defaultValue: string;
  error?: string | undefined;
}

/** The `endpoint` field of a FilterBar: picked by name, or typed as an ID when the endpoints could not be read. */
export function EndpointFilterField({ endpoints, tenantNames, defaultValue, error }: EndpointFilterFieldProps) {
  const [endpoint, setEndpoint] = useState<string | null>(defaultValue || null);
  if (!endpoints)
    return <TextInput name="endpoint" label="Endpoint ID" defaultValue={defaultValue} w={260} styles={MONO_INPUT} />;
  return (
    <EndpointSelect
      endpoints={endpoints}
      tenantNames={tenantNames}
      value={endpoint}
      onChange={setEndpoint}
      name="endpoint"
      error={error}
      w={300}
    />
  );
}
