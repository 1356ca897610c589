'use client';

import { useState, useTransition } from 'react';
import Link from 'next/link';
import { Anchor, Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { formatTimestampSeconds } from '@/lib/format';
import { callAction } from '@/lib/idempotency-key';
import { valueText } from '@/lib/key-value-rows';
import { notifyApiError } from '@/lib/notify';
import { EmptyTableRow } from '@/components/empty-table-row';
import { listEventsAction } from './actions';
import type { EventFilters, OperationalEvent, OperationalEventPage } from './event.types';

const TYPE_COLORS: Record<string, string> = {
  'webhooks.delivery.failed': 'red',
  'webhooks.delivery.expired': 'orange',
  'webhooks.endpoint.disabled': 'red',
  'webhooks.endpoint.recovered': 'green',
  'webhooks.source.rejected': 'orange',
  'webhooks.replay.completed': 'green',
  'webhooks.replay.failed': 'red',
  'webhooks.budget.blocked': 'yellow',
};

/** Data values that name a page of the console become links to it. */
function DataValue({ name, value }: { name: string; value: unknown }) {
  if (typeof value === 'string' && name === 'message_id')
    return (
      <Anchor component={Link} href={`/messages/${encodeURIComponent(value)}`} size="xs" ff="monospace">
        {value}
      </Anchor>
    );
  if (typeof value === 'string' && name === 'endpoint_id')
    return (
      <Anchor component={Link} href={`/endpoints/${encodeURIComponent(value)}`} size="xs" ff="monospace">
        {value}
      </Anchor>
    );
  if (typeof value === 'string' && name === 'source_id')
    return (
      <Anchor component={Link} href={`/sources/${encodeURIComponent(value)}`} size="xs" ff="monospace">
        {value}
      </Anchor>
    );
  return (
    <Text span size="xs" ff="monospace">
      {valueText(value)}
    </Text>
  );
}

function EventData({ data }: { data: OperationalEvent['data'] }) {
  return (
    <Stack gap={0} data-testid="event-data">
      {Object.entries(data).map(([name, value]) => (
        <Text key={name} size="xs">
          <Text span size="xs" c="dimmed">
            {name}:
          </Text>{' '}
          <DataValue name={name} value={value} />
        </Text>
      ))}
    </Stack>
  );
}

/** The resource, and for a coalesced burst how many occurrences it holds and the first and last of them. */
function Occurrences({ event }: { event: OperationalEvent }) {
  return (
    <Stack gap={0}>
      <Text size="sm" fw={event.coalesced ? 500 : 400} data-testid="event-count">
        {event.coalesced ? `${event.count} (coalesced)` : '1'}
      </Text>
      {event.coalesced ? (
        <>
          <Text size="xs" ff="monospace">
            first {event.firstId}
          </Text>
          <Text size="xs" ff="monospace">
            last {event.lastId}
          </Text>
        </>
      ) : (
        <Text size="xs" ff="monospace">
          {event.resourceId}
        </Text>
      )}
      <Text size="xs" c="dimmed">
        resource version {event.resourceVersion}
      </Text>
    </Stack>
  );
}

interface EventsFeedProps {
  initial: OperationalEventPage;
  /** The cursor the first page was read from (null: the start of the feed). */
  startCursor: string | null;
  filters: EventFilters;
  tenantNames: ReadonlyMap<string, string>;
}

/**
 * The feed oldest first; "Load newer" continues after the last event shown. An empty answer means nothing newer
 * has happened yet: the next click asks again from the same place. A coalesced event comes again, with its new
 * count and last ID, each time it folds in another occurrence.
 */
export function EventsFeed({ initial, startCursor, filters, tenantNames }: EventsFeedProps) {
  const [events, setEvents] = useState(initial.nodes);
  const [cursor, setCursor] = useState(initial.nextCursor ?? startCursor);
  const [nothingNewer, setNothingNewer] = useState(false);
  const [pending, startTransition] = useTransition();

  const loadNewer = () =>
    startTransition(async () => {
      const result = await callAction(() => listEventsAction(filters, cursor));
      if (!result.ok) {
        notifyApiError(result.error);
        return;
      }
      setNothingNewer(result.data.nodes.length === 0);
      if (result.data.nodes.length === 0) return;
      // An event that folds in another occurrence moves to the end of the feed: show it there, once.
      const fresh = new Set(result.data.nodes.map((event) => event.id));
      setEvents((shown) => [...shown.filter((event) => !fresh.has(event.id)), ...result.data.nodes]);
      setCursor(result.data.nextCursor ?? cursor);
    });

  return (
    <Stack gap="xs">
      <Table.ScrollContainer minWidth={1000}>
        <Table striped highlightOnHover verticalSpacing="sm" aria-label="Operational events">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Time</Table.Th>
              <Table.Th miw={250}>Type</Table.Th>
              <Table.Th>Tenant</Table.Th>
              <Table.Th>Occurrences and resource</Table.Th>
              <Table.Th>Data</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {events.length === 0 && <EmptyTableRow columns={5}>No events in the last 30 days.</EmptyTableRow>}
            {events.map((event) => (
              <Table.Tr key={event.id} data-event-id={event.id}>
                <Table.Td>
                  <Text size="sm">{formatTimestampSeconds(event.createdAt)}</Text>
                </Table.Td>
                <Table.Td>
                  <Badge color={TYPE_COLORS[event.type] ?? 'gray'} variant="light" tt="none">
                    {event.type}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Anchor component={Link} size="sm" href={`/tenants/${encodeURIComponent(event.tenantId)}/endpoints`}>
                    {tenantNames.get(event.tenantId) ?? event.tenantId}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Occurrences event={event} />
                </Table.Td>
                <Table.Td>
                  <EventData data={event.data} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          {nothingNewer ? 'Nothing newer yet.' : `${events.length} shown, oldest first.`}
        </Text>
        <Button variant="default" onClick={loadNewer} loading={pending}>
          Load newer
        </Button>
      </Group>
    </Stack>
  );
}
