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
  /** The newest page of the feed (read newest first). */
  initial: OperationalEventPage;
  filters: EventFilters;
  tenantNames: ReadonlyMap<string, string>;
}

/** How many newest-first pages "Load newer" reads at most before it starts the feed again from the newest. */
const NEWER_PAGES = 5;

/**
 * Whether the feed already shows this event as it is now. A new event, or one that folded in another occurrence
 * since, is read below the snapshot's xmin and so after every event shown: newest first, it comes before them all.
 */
function isShown(shown: readonly OperationalEvent[], event: OperationalEvent): boolean {
  return shown.some((known) => known.id === event.id && known.count === event.count);
}

/**
 * The feed newest first. "Load older" continues down with the newest-first cursor until the oldest event of the 30
 * days. "Load newer" reads newest-first pages from the top until it meets an event shown as it is, and puts what it
 * read on top; an event that folded in another occurrence comes again with its new count and moves to the top
 * instead of showing twice. An empty answer means nothing newer has happened yet.
 */
export function EventsFeed({ initial, filters, tenantNames }: EventsFeedProps) {
  const [events, setEvents] = useState(initial.nodes);
  const [olderCursor, setOlderCursor] = useState(initial.nextCursor);
  const [note, setNote] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  const loadNewer = () =>
    startTransition(async () => {
      const fresh: OperationalEvent[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < NEWER_PAGES; pages++) {
        const result = await callAction(() => listEventsAction(filters, cursor));
        if (!result.ok) {
          notifyApiError(result.error);
          return;
        }
        const met = result.data.nodes.findIndex((event) => isShown(events, event));
        fresh.push(...(met === -1 ? result.data.nodes : result.data.nodes.slice(0, met)));
        cursor = result.data.nextCursor;
        if (met !== -1 || cursor === null) {
          const ids = new Set(fresh.map((event) => event.id));
          setEvents((shown) => [...fresh, ...shown.filter((event) => !ids.has(event.id))]);
          setNote(fresh.length === 0 ? 'Nothing newer yet.' : null);
          return;
        }
      }
      // More happened than a few pages hold: start again from the newest, and continue down from there.
      setEvents(fresh);
      setOlderCursor(cursor);
      setNote(`More than ${fresh.length} events since: showing the newest. Load older continues from there.`);
    });

  const loadOlder = () =>
    startTransition(async () => {
      const result = await callAction(() => listEventsAction(filters, olderCursor));
      if (!result.ok) {
        notifyApiError(result.error);
        return;
      }
      setEvents((shown) => {
        const ids = new Set(shown.map((event) => event.id));
        return [...shown, ...result.data.nodes.filter((event) => !ids.has(event.id))];
      });
      setOlderCursor(result.data.nextCursor);
      setNote(null);
    });

  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Text size="sm" c="dimmed" data-testid="events-summary">
          {note ??
            `${events.length} shown, newest first${olderCursor === null ? '; nothing older in the 30 days.' : '.'}`}
        </Text>
        <Button variant="default" onClick={loadNewer} loading={pending}>
          Load newer
        </Button>
      </Group>
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
                  <Text size="sm" style={{ whiteSpace: 'nowrap' }} data-testid="event-time">
                    {formatTimestampSeconds(event.createdAt)}
                  </Text>
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
      <Group justify="flex-end">
        <Button variant="default" onClick={loadOlder} loading={pending} disabled={olderCursor === null}>
          Load older
        </Button>
      </Group>
    </Stack>
  );
}
