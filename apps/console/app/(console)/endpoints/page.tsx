import { Group, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { TenantFilter } from '@/components/tenant-filter';
import { listTenantOptions } from '../tenants/tenant-options';
import { listEndpoints } from './endpoint.api';
import { toEndpointRow } from './endpoint-row';
import { EndpointsTable } from './endpoints-table';
import { NewEndpointButton } from './new-endpoint-button';

export const metadata = { title: 'Endpoints · Webhook console' };

interface EndpointsPageProps {
  searchParams: Promise<{ after?: string | string[]; tenant?: string | string[] }>;
}

/** Every endpoint of the team, or of the tenant picked by name. */
export default async function EndpointsPage({ searchParams }: EndpointsPageProps) {
  const params = await searchParams;
  const after = searchParam(params.after);
  const tenantId = searchParam(params.tenant).trim();
  const [page, tenants] = await Promise.all([
    toActionResult(() => listEndpoints({ tenantId: tenantId || null, after: after || null })),
    toActionResult(listTenantOptions),
  ]);
  const names = new Map(tenants.ok ? tenants.data.options.map((tenant) => [tenant.id, tenant.name]) : []);
  const picked = tenantId ? (names.get(tenantId) ?? tenantId) : null;

  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            Endpoints
          </Title>
          <Text c="dimmed" size="sm">
            Where webhooks are delivered, for every tenant or the one picked below. Oldest first.
          </Text>
        </div>
        {tenants.ok && <NewEndpointButton tenantId={tenantId || null} tenants={tenants.data} />}
      </Group>
      {tenants.ok && <TenantFilter path="/endpoints" tenants={tenants.data} value={tenantId || null} />}
      {!tenants.ok && <LoadError error={tenants.error} resetHref="/endpoints" title="Could not load the tenants" />}
      {!page.ok && <LoadError error={page.error} resetHref="/endpoints" />}
      {page.ok && (
        <>
          <EndpointsTable
            endpoints={page.data.nodes.map(toEndpointRow)}
            tenantNames={names}
            emptyText={picked ? `${picked} has no endpoints yet.` : 'No endpoints yet.'}
          />
          <Pager
            shown={page.data.nodes.length}
            firstHref={after ? listHref('/endpoints', { tenant: tenantId }) : null}
            nextHref={
              page.data.nextCursor ? listHref('/endpoints', { tenant: tenantId, after: page.data.nextCursor }) : null
            }
          />
        </>
      )}
    </Stack>
  );
}
