import { Paper, Stack, Text, Title } from '@mantine/core';
import { isFormLevel } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { formatTimestamp } from '@/lib/format';
import { searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import { endpointNames, listEndpointOptions } from '../endpoints/endpoint-options';
import { listTenantOptions } from '../tenants/tenant-options';
import { getAnalytics } from './analytics.api';
import { parseBucket, parseWindow, totals, windowBounds, type DashboardSearch } from './analytics.types';
import { DashboardFilters } from './dashboard-filters';
import { DashboardSummary } from './dashboard-summary';
import { LazyDashboardCharts } from './lazy-dashboard-charts';

export const metadata = { title: 'Dashboard · Webhook console' };

type Param = string | string[] | undefined;

const SCOPE_FIELDS = ['tenant_id', 'endpoint_id', 'source_id'] as const;

/** Which scope the counts are of: the API takes the most specific one given (endpoint, source, tenant). */
function describeScope(
  search: DashboardSearch,
  tenantNames: ReadonlyMap<string, string>,
  endpointNames: ReadonlyMap<string, string>,
): string {
  if (search.endpoint) return `endpoint ${endpointNames.get(search.endpoint) ?? search.endpoint}`;
  if (search.source) return `source ${search.source}`;
  if (search.tenant) return `tenant ${tenantNames.get(search.tenant) ?? search.tenant}`;
  return 'the whole team';
}

/** Traffic, outcomes and the queue over time, for the team or one tenant, endpoint or source. */
export default async function DashboardPage({
  searchParams,
}: {
  searchParams: Promise<Record<keyof DashboardSearch, Param>>;
}) {
  const params = await searchParams;
  const window = parseWindow(searchParam(params.window));
  const search: DashboardSearch = {
    window,
    bucket: parseBucket(searchParam(params.bucket), window),
    tenant: searchParam(params.tenant).trim(),
    endpoint: searchParam(params.endpoint).trim(),
    source: searchParam(params.source).trim(),
  };
  const bounds = windowBounds(window, new Date());
  const [analytics, tenants, endpoints] = await Promise.all([
    toActionResult(() =>
      getAnalytics(bounds, search.bucket, {
        tenantId: search.tenant,
        endpointId: search.endpoint,
        sourceId: search.source,
      }),
    ),
    toActionResult(() => listTenantOptions()),
    toActionResult(() => listEndpointOptions()),
  ]);
  const tenantNames = new Map(tenants.ok ? tenants.data.options.map((tenant) => [tenant.id, tenant.name]) : []);
  const names = endpointNames(endpoints.ok ? endpoints.data : null);

  return (
    <Stack>
      <div>
        <Title order={1} size="h2">
          Dashboard
        </Title>
        <Text c="dimmed" size="sm">
          Messages, deliveries, outcomes and the queue over time, counted when each thing happened. The counts trail
          what happens by up to about a minute; reload to see the newest.
        </Text>
      </div>
      <Paper withBorder p="lg">
        <Stack>
          <DashboardFilters
            key={JSON.stringify(search)}
            search={search}
            tenants={tenants.ok ? tenants.data : null}
            endpoints={endpoints.ok ? endpoints.data : null}
            tenantNames={tenantNames}
            error={analytics.ok ? null : analytics.error}
          />
          <Text size="sm" data-testid="dashboard-scope">
            {`Showing ${describeScope(search, tenantNames, names)}, ${formatTimestamp(bounds.createdAfter)} to ${formatTimestamp(bounds.createdBefore)}, per ${search.bucket}.`}
          </Text>
          {!analytics.ok && isFormLevel(analytics.error, SCOPE_FIELDS) && (
            <LoadError error={analytics.error} resetHref="/dashboard" title="Could not load the counts" />
          )}
        </Stack>
      </Paper>
      {analytics.ok && (
        <>
          <DashboardSummary
            totals={totals(analytics.data.rows)}
            queueDepth={analytics.data.queueDepth}
            oldestDueAgeSeconds={analytics.data.oldestDueAgeSeconds}
          />
          <LazyDashboardCharts rows={analytics.data.rows} bucket={search.bucket} />
        </>
      )}
    </Stack>
  );
}
