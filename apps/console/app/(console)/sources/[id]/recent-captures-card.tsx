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
  /** The source's newest captures, newest first (at most RECENT_CAPTURES). */
  messages: Message[];
}

/** The newest captures, newest first, each linked to its message page with its status and deliveries. */
export function RecentCapturesCard({ sourceId, messages }: RecentCapturesCardProps) {
  const described =
    messages.length < RECENT_CAPTURES
      ? 'Requests that verified and were captured as messages, newest first.'
      : `The newest ${messages.length} captures, newest first; the messages search has the others.`;
  return (
    <Stack gap="xs">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2} size="h3">
            Recent captures
          </Title>
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
            {messages.length === 0 && <EmptyTableRow columns={5}>Nothing captured yet.</EmptyTableRow>}
            {messages.map((message) => (
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
