import { Paper, Stack, Text, Title } from '@mantine/core';
import { isFormLevel } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { toApiTimestamp } from '@/lib/time-window';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listTenantOptions } from '../tenants/tenant-options';
import { listEventTypeChoices, listMessages } from './message.api';
import { MessageFilters } from './message-filters';
import { MESSAGE_FILTER_FIELDS, type MessageSearch } from './message.types';
import { MessagesTable } from './messages-table';
import { OpenMessageForm } from './open-message-form';
import { PublishMessageForm } from './publish-message-form';

export const metadata = { title: 'Messages · Webhook console' };

type Param = string | string[] | undefined;

interface MessagesPageProps {
  searchParams: Promise<Record<keyof MessageSearch | 'after', Param>>;
}

export default async function MessagesPage({ searchParams }: MessagesPageProps) {
  const params = await searchParams;
  const after = searchParam(params.after);
  const search: MessageSearch = {
    createdAfter: searchParam(params.createdAfter).trim(),
    createdBefore: searchParam(params.createdBefore).trim(),
    tenant: searchParam(params.tenant).trim(),
    eventType: searchParam(params.eventType).trim(),
    sourceId: searchParam(params.sourceId).trim(),
    status: searchParam(params.status).trim(),
    externalId: searchParam(params.externalId).trim(),
  };
  const [page, tenants, eventTypes] = await Promise.all([
    toActionResult(() =>
      listMessages(
        {
          createdAfter: search.createdAfter && toApiTimestamp(search.createdAfter),
          createdBefore: search.createdBefore && toApiTimestamp(search.createdBefore),
          tenantId: search.tenant,
          eventType: search.eventType,
          sourceId: search.sourceId,
          status: search.status,
          externalId: search.externalId,
        },
        after || null,
      ),
    ),
    toActionResult(() => listTenantOptions()),
    toActionResult(() => listEventTypeChoices()),
  ]);
  const names = new Map(tenants.ok ? tenants.data.options.map((tenant) => [tenant.id, tenant.name]) : []);
  const filterError = page.ok ? null : page.error;
  const href = (cursor: string | null) => listHref('/messages', { ...search, after: cursor });

  return (
    <Stack>
      <div>
        <Title order={1} size="h2">
          Messages
        </Title>
        <Text c="dimmed" size="sm">
          Find messages and follow their deliveries, open a message by its ID, or publish an event to a tenant&apos;s
          endpoints.
        </Text>
      </div>
      <Paper withBorder p="lg">
        <Stack gap="xs">
          <Title order={2} size="h3">
            Open a message
          </Title>
          <OpenMessageForm />
        </Stack>
      </Paper>
      <Paper withBorder p="lg">
        <Stack>
          <div>
            <Title order={2} size="h3">
              Find messages
            </Title>
            <Text size="sm" c="dimmed">
              Newest first within the time window; without one, the last 30 days. Times are UTC; a window spans at most
              30 days. &quot;repaired N&quot; beside a status counts failed deliveries a replay has delivered since.
            </Text>
          </div>
          <MessageFilters
            key={JSON.stringify(search)}
            search={search}
            tenants={tenants.ok ? tenants.data : null}
            error={filterError}
          />
          {!page.ok && isFormLevel(page.error, MESSAGE_FILTER_FIELDS) && (
            <LoadError error={page.error} resetHref="/messages" />
          )}
          {page.ok && (
            <div>
              <MessagesTable
                messages={page.data.nodes}
                tenantNames={names}
                emptyText={
                  Object.values(search).some((value) => value !== '')
                    ? 'No message on this page matches the filters.'
                    : 'No messages in the last 30 days.'
                }
              />
              {search.status !== '' && (
                <Text size="xs" c="dimmed" mt="xs">
                  The status filter is applied to each page after it is read, so a page can show fewer messages than it
                  holds, or none, while the next page has more.
                </Text>
              )}
              <Pager
                shown={page.data.nodes.length}
                firstHref={after ? href(null) : null}
                nextHref={page.data.nextCursor ? href(page.data.nextCursor) : null}
              />
            </div>
          )}
        </Stack>
      </Paper>
      <Paper withBorder p="lg">
        <Stack>
          <div>
            <Title order={2} size="h3">
              Publish a message
            </Title>
            <Text size="sm" c="dimmed">
              It goes to every matching endpoint of the tenant, exactly like POST /messages, and is charged the same.
            </Text>
          </div>
          {!tenants.ok && <LoadError error={tenants.error} resetHref="/messages" title="Could not load the tenants" />}
          {!eventTypes.ok && (
            <LoadError error={eventTypes.error} resetHref="/messages" title="Could not load the event types" />
          )}
          {tenants.ok && eventTypes.ok && <PublishMessageForm tenants={tenants.data} eventTypes={eventTypes.data} />}
        </Stack>
      </Paper>
    </Stack>
  );
}
