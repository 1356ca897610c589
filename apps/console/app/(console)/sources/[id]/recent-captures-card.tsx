'use client';

import Link from 'next/link';
import { Anchor, Group, Stack, Table, Text, Title } from '@mantine/core';
import { formatTimestampSeconds } from '@/lib/format';
import { listHref } from '@/lib/list-href';
import { EmptyTableRow } from '@/components/empty-table-row';
import { MessageStatusBadge } from '../../messages/message-status-badge';
import { countsSummary, type Message } from '../../messages/message.types';
import { RECENT_CAPTURES } from '../source.types';

interface RecentCapturesCardProps {
  sourceId: string;
  /** The source's captures of the last 30 days, oldest first, as the API lists them. */
  messages: Message[];
  /** True when the API may hold more than were read (the read was full). */
  more: boolean;
}

/** The newest captures, newest first, each linked to its message page with its status and deliveries. */
export function RecentCapturesCard({ sourceId, messages, more }: RecentCapturesCardProps) {
  const newest = [...messages].reverse().slice(0, RECENT_CAPTURES);
  const described =
    messages.length === 0
      ? 'Requests that verified and were captured as messages, over the last 30 days.'
      : more
        ? `The newest ${newest.length} of the first ${messages.length} captures of the last 30 days, newest first: there are more than one read holds.`
        : `The newest ${newest.length} of ${messages.length} captures of the last 30 days, newest first.`;
  return (
    <Stack gap="xs">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={3}>Recent captures</Title>
          <Text size="sm" c="dimmed">
            {described}
          </Text>
        </div>
        <Anchor component={Link} size="sm" href={listHref('/messages', { sourceId })}>
          All captures of this source
        </Anchor>
      </Group>
      <Table.ScrollContainer minWidth={820}>
        <Table striped highlightOnHover verticalSpacing="xs" aria-label="Recent captures">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Captured</Table.Th>
              <Table.Th>Message</Table.Th>
              <Table.Th>Event type</Table.Th>
              <Table.Th miw={140}>Status</Table.Th>
              <Table.Th>Original deliveries</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {newest.length === 0 && <EmptyTableRow columns={5}>Nothing captured in the last 30 days.</EmptyTableRow>}
            {newest.map((message) => (
              <Table.Tr key={message.id} data-message-id={message.id}>
                <Table.Td>
                  <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                    {formatTimestampSeconds(message.createdAt)}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Anchor
                    component={Link}
                    href={`/messages/${encodeURIComponent(message.id)}`}
                    ff="monospace"
                    size="sm"
                  >
                    {message.id}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Text ff="monospace" size="sm">
                    {message.eventType}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <MessageStatusBadge status={message.status} />
                </Table.Td>
                <Table.Td>
                  <Text size="sm" data-testid="delivery-summary">
                    {countsSummary(message.deliveryCounts)}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
