import { Paper, Stack, Text, Title } from '@mantine/core';
import { isFormLevel } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import { listTenantOptions } from '../tenants/tenant-options';
import { listEvents } from './event.api';
import { EVENT_FILTER_FIELDS, type EventFilters } from './event.types';
import { EventFiltersForm } from './event-filters';
import { EventsFeed } from './events-feed';

export const metadata = { title: 'Events · Webhook console' };

type Param = string | string[] | undefined;

interface EventsPageProps {
  searchParams: Promise<{ type?: Param; resource?: Param; tenant?: Param }>;
}

/** The operational events feed: what went wrong (or right again) with deliveries, endpoints, sources and replays. */
export default async function EventsPage({ searchParams }: EventsPageProps) {
  const params = await searchParams;
  const filters: EventFilters = {
    type: searchParam(params.type).trim(),
    resourceId: searchParam(params.resource).trim(),
    tenantId: searchParam(params.tenant).trim(),
  };
  const [page, tenants] = await Promise.all([
    toActionResult(() => listEvents(filters, null, 'newest')),
    toActionResult(() => listTenantOptions()),
  ]);
  const tenantNames = new Map(tenants.ok ? tenants.data.options.map((tenant) => [tenant.id, tenant.name]) : []);

  return (
    <Stack>
      <div>
        <Title order={1} size="h2">
          Events
        </Title>
        <Text c="dimmed" size="sm">
          What happened to deliveries, endpoints, sources and replays, newest first over the last 30 days. A burst of
          the same event (many deliveries of one endpoint failing) is folded into one row with its count and the IDs of
          its first and last occurrence; the data is the first occurrence&apos;s. &quot;Load newer&quot; adds what
          happened since at the top, &quot;Load older&quot; continues down.
        </Text>
      </div>
      <Paper withBorder p="lg">
        <Stack>
          <EventFiltersForm
            key={JSON.stringify(filters)}
            filters={filters}
            tenants={tenants.ok ? tenants.data : null}
            error={page.ok ? null : page.error}
          />
          {!page.ok && isFormLevel(page.error, EVENT_FILTER_FIELDS) && (
            <LoadError error={page.error} resetHref="/events" />
          )}
          {page.ok && (
            <EventsFeed
              key={`feed:${JSON.stringify(filters)}`}
              initial={page.data}
              filters={filters}
              tenantNames={tenantNames}
            />
          )}
        </Stack>
      </Paper>
    </Stack>
  );
}
