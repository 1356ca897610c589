import { Group, Paper, Stack, Text, Title } from '@mantine/core';
import { isFormLevel } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { toApiTimestamp } from '@/lib/time-window';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listDeliveries } from '../deliveries/delivery.api';
import { endpointNames, listEndpointOptions } from '../endpoints/endpoint-options';
import { StartReplayButton } from '../replays/start-replay-button';
import { listTenantOptions } from '../tenants/tenant-options';
import { DeadLetterFilters } from './dead-letter-filters';
import { DEAD_LETTER_FILTER_FIELDS, type DeadLetterSearch } from './dead-letter.types';
import { DeadLettersTable } from './dead-letters-table';

export const metadata = { title: 'Dead letters · Webhook console' };

type Param = string | string[] | undefined;

interface DeadLettersPageProps {
  searchParams: Promise<Record<keyof DeadLetterSearch | 'after', Param>>;
}

/** What the table says when nothing is listed: hidden repaired ones are not "no dead letters". */
function emptyText(status: string, withRepaired: boolean, filtered: boolean): string {
  const what = withRepaired ? `${status} delivery` : `${status} delivery still to repair`;
  return filtered ? `No ${what} matches the filters.` : `No ${what}.`;
}

/** Deliveries that ended without success (failed, or expired before one), to inspect and replay. */
export default async function DeadLettersPage({ searchParams }: DeadLettersPageProps) {
  const params = await searchParams;
  const after = searchParam(params.after);
  const search: DeadLetterSearch = {
    status: searchParam(params.status) === 'expired' ? 'expired' : 'failed',
    tenant: searchParam(params.tenant).trim(),
    endpoint: searchParam(params.endpoint).trim(),
    eventType: searchParam(params.eventType).trim(),
    createdAfter: searchParam(params.createdAfter).trim(),
    createdBefore: searchParam(params.createdBefore).trim(),
    sequence: searchParam(params.sequence).trim(),
    repaired: searchParam(params.repaired) === 'show' ? 'show' : '',
  };
  const [page, tenants, endpoints] = await Promise.all([
    toActionResult(() =>
      listDeliveries(
        {
          status: search.status,
          tenantId: search.tenant,
          endpointId: search.endpoint,
          eventType: search.eventType,
          createdAfter: search.createdAfter && toApiTimestamp(search.createdAfter),
          createdBefore: search.createdBefore && toApiTimestamp(search.createdBefore),
          sequence: search.sequence,
          // One row per failure: its newest failed generation, the earlier ones beside it.
          latestGeneration: true,
          ...(search.repaired === 'show' ? {} : { repaired: false }),
        },
        // The pager's cursors come from newest-first pages, so every page is asked newest first.
        { after: after || null, order: 'newest', withGenerations: true },
      ),
    ),
    toActionResult(() => listTenantOptions()),
    toActionResult(() => listEndpointOptions()),
  ]);
  const tenantNames = new Map(tenants.ok ? tenants.data.options.map((tenant) => [tenant.id, tenant.name]) : []);
  const names = endpointNames(endpoints.ok ? endpoints.data : null);
  const href = (cursor: string | null) => listHref('/dead-letters', { ...search, after: cursor });
  const filtered = [
    search.tenant,
    search.endpoint,
    search.eventType,
    search.createdAfter,
    search.createdBefore,
    search.sequence,
  ].some((value) => value !== '');

  return (
    <Stack>
      <Group justify="space-between" align="flex-end" wrap="nowrap">
        <div>
          <Title order={1} size="h2">
            Dead letters
          </Title>
          <Text c="dimmed" size="sm">
            Deliveries that ended without success: failed (refused, or out of attempts) or expired (their window closed
            first). They cannot be retried; a replay sends them again as a new, paid delivery. Newest first within the
            time window; without one, the last 30 days. One a later replay already delivered is repaired: hidden unless
            &quot;Hide repaired&quot; is off, and left out of &quot;Replay selected&quot; unless asked for. &quot;Replay
            dead letters&quot; replays every failed and expired delivery of the endpoint, window and event type in the
            filters that is not repaired, not only this page.
          </Text>
        </div>
        <div style={{ flexShrink: 0 }}>
          <StartReplayButton
            key={JSON.stringify(search)}
            endpointId={search.endpoint || null}
            endpointName={names.get(search.endpoint) ?? null}
            initial={{
              createdAfter: search.createdAfter,
              createdBefore: search.createdBefore,
              eventType: search.eventType,
            }}
            disabledHint="Filter by an endpoint first: a replay covers one endpoint's dead letters."
          />
        </div>
      </Group>
      <Paper withBorder p="lg">
        <Stack>
          <DeadLetterFilters
            key={JSON.stringify(search)}
            search={search}
            tenants={tenants.ok ? tenants.data : null}
            endpoints={endpoints.ok ? endpoints.data : null}
            tenantNames={tenantNames}
            error={page.ok ? null : page.error}
          />
          {!page.ok && isFormLevel(page.error, DEAD_LETTER_FILTER_FIELDS) && (
            <LoadError error={page.error} resetHref="/dead-letters" />
          )}
          {page.ok && (
            <div>
              <DeadLettersTable
                key={`${JSON.stringify(search)}:${after}`}
                deliveries={page.data.nodes}
                tenantNames={tenantNames}
                emptyText={emptyText(search.status, search.repaired === 'show', filtered)}
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
