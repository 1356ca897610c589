import { Paper, Stack, Text, Title } from '@mantine/core';
import { isFormLevel } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { endpointNames, listEndpointOptions } from '../endpoints/endpoint-options';
import { listTenantOptions } from '../tenants/tenant-options';
import { listReplays } from './replay.api';
import { ReplayFilters } from './replay-filters';
import { ReplaysTable } from './replays-table';

export const metadata = { title: 'Replays · Webhook console' };

type Param = string | string[] | undefined;

/** Bulk replays of endpoints' dead letters, oldest first, optionally of one endpoint. */
export default async function ReplaysPage({
  searchParams,
}: {
  searchParams: Promise<Record<'endpoint' | 'after', Param>>;
}) {
  const params = await searchParams;
  const endpoint = searchParam(params.endpoint).trim();
  const after = searchParam(params.after);
  const [page, endpoints, tenants] = await Promise.all([
    toActionResult(() => listReplays(endpoint || null, { after: after || null })),
    toActionResult(() => listEndpointOptions()),
    toActionResult(() => listTenantOptions()),
  ]);
  const tenantNames = new Map(tenants.ok ? tenants.data.options.map((tenant) => [tenant.id, tenant.name]) : []);
  const href = (cursor: string | null) => listHref('/replays', { endpoint, after: cursor });

  return (
    <Stack>
      <div>
        <Title order={1} size="h2">
          Replays
        </Title>
        <Text c="dimmed" size="sm">
          Bulk replays send an endpoint&apos;s failed and expired deliveries of a window again, as new paid deliveries,
          once the receiver is fixed. Start one from an endpoint&apos;s page or from the dead letters filtered by
          endpoint. Oldest first.
        </Text>
      </div>
      <Paper withBorder p="lg">
        <Stack>
          <ReplayFilters
            key={endpoint}
            endpoint={endpoint}
            endpoints={endpoints.ok ? endpoints.data : null}
            tenantNames={tenantNames}
            error={page.ok ? null : page.error}
          />
          {!page.ok && isFormLevel(page.error, ['endpoint_id']) && (
            <LoadError error={page.error} resetHref="/replays" />
          )}
          {page.ok && (
            <div>
              <ReplaysTable
                key={`${endpoint}:${after}`}
                replays={page.data.nodes}
                endpointNames={endpointNames(endpoints.ok ? endpoints.data : null)}
                emptyText={endpoint ? 'This endpoint has no replays.' : 'No replays yet.'}
              />
              <Pager
                shown={page.data.nodes.length}
                firstHref={after ? href(null) : null}
                nextHref={page.data.nextCursor ? href(page.data.nextCursor) : null}
              />
            </div>
          )}
        </Stack>
      </Paper>
    </Stack>
  );
}
