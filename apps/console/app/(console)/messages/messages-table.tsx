'use client';

import Link from 'next/link';
import { Anchor, Table, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { EmptyTableRow } from '@/components/empty-table-row';
import { MessageStatusBadge } from './message-status-badge';
import { countsSummary, type Message } from './message.types';

/** Long event types, tenant names and external IDs break inside a word rather than push the table past its card. */
const WRAP_ANYWHERE = { overflowWrap: 'anywhere' } as const;

interface MessagesTableProps {
  messages: Message[];
  tenantNames: ReadonlyMap<string, string>;
  emptyText: string;
}

export function MessagesTable({ messages, tenantNames, emptyText }: MessagesTableProps) {
  return (
    // Narrow enough to fit its card beside the navigation on a 1366-pixel screen; narrower screens scroll the table.
    <Table.ScrollContainer minWidth={900}>
      <Table striped highlightOnHover verticalSpacing="sm" aria-label="Messages">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Created</Table.Th>
            <Table.Th>Message</Table.Th>
            <Table.Th>Event type</Table.Th>
            <Table.Th>Tenant</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Original deliveries</Table.Th>
            <Table.Th>External ID</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {messages.length === 0 && <EmptyTableRow columns={7}>{emptyText}</EmptyTableRow>}
          {messages.map((message) => (
            <Table.Tr key={message.id} data-message-id={message.id}>
              <Table.Td>
                <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                  {formatTimestamp(message.createdAt)}
                </Text>
              </Table.Td>
              <Table.Td>
                <Anchor component={Link} href={`/messages/${encodeURIComponent(message.id)}`} ff="monospace" size="sm">
                  {message.id}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <Text ff="monospace" size="sm" style={WRAP_ANYWHERE}>
                  {message.eventType}
                </Text>
              </Table.Td>
              <Table.Td>
                <Anchor
                  component={Link}
                  size="sm"
                  style={WRAP_ANYWHERE}
                  href={`/tenants/${encodeURIComponent(message.tenantId)}/endpoints`}
                >
                  {tenantNames.get(message.tenantId) ?? message.tenantId}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <MessageStatusBadge status={message.status} repairedCount={message.repairedCount} />
              </Table.Td>
              <Table.Td>
                <Text size="sm">{countsSummary(message.deliveryCounts)}</Text>
              </Table.Td>
              <Table.Td>
                <Text size="sm" c={message.externalId ? undefined : 'dimmed'} style={WRAP_ANYWHERE}>
                  {message.externalId ?? 'none'}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
