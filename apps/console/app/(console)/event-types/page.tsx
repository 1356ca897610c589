import { Group, Stack, Text, Title } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { ListFilter } from '@/components/list-filter';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listEventTypes } from './event-type.api';
import { EventTypesTable } from './event-types-table';
import { NewEventTypeButton } from './new-event-type-button';

export const metadata = { title: 'Event types · Webhook console' };

interface EventTypesPageProps {
  searchParams: Promise<{ after?: string | string[]; name?: string | string[] }>;
}

export default async function EventTypesPage({ searchParams }: EventTypesPageProps) {
  const params = await searchParams;
  const after = searchParam(params.after);
  const name = searchParam(params.name).trim();
  const page = await toActionResult(() => listEventTypes({ after: after || null, name: name || null }));
  const filterError = page.ok ? undefined : fieldMessage(page.error, 'name');

  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            Event types
          </Title>
          <Text c="dimmed" size="sm">
            The catalog of events your endpoints can subscribe to.
          </Text>
        </div>
        <NewEventTypeButton />
      </Group>
      <ListFilter action="/event-types" param="name" label="Find by name" value={name} error={filterError} />
      {!page.ok && filterError === undefined && <LoadError error={page.error} resetHref="/event-types" />}
      {page.ok && (
        <>
          <EventTypesTable
            eventTypes={page.data.nodes}
            emptyText={name ? `No event type is named ${name}. Names match exactly.` : 'No event types yet.'}
          />
          <Pager
            shown={page.data.nodes.length}
            firstHref={after ? listHref('/event-types', { name }) : null}
            nextHref={page.data.nextCursor ? listHref('/event-types', { name, after: page.data.nextCursor }) : null}
          />
        </>
      )}
    </Stack>
  );
}
