'use client';

import Link from 'next/link';
import { Anchor, Table, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import type { PortalMessage } from './portal.types';

/** The tenant's messages, newest first; each opens with its payload and deliveries. */
export function MessagesTable({ messages, emptyText }: { messages: PortalMessage[]; emptyText: string }) {
  return (
    <Table striped data-testid="portal-messages">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Message</Table.Th>
          <Table.Th>External ID</Table.Th>
          <Table.Th>Event type</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Created</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {messages.length === 0 ? (
          <Table.Tr>
            <Table.Td colSpan={5}>
              <Text size="sm">{emptyText}</Text>
            </Table.Td>
          </Table.Tr>
        ) : (
          messages.map((message) => (
            <Table.Tr key={message.id} data-message-id={message.id}>
              <Table.Td>
                <Anchor component={Link} href={`/portal/messages/${message.id}`} ff="monospace" size="sm">
                  {message.id}
                </Anchor>
              </Table.Td>
              <Table.Td>{message.externalId ?? '—'}</Table.Td>
              <Table.Td>{message.eventType}</Table.Td>
              <Table.Td>{message.status}</Table.Td>
              <Table.Td>{formatTimestamp(message.createdAt)}</Table.Td>
            </Table.Tr>
          ))
        )}
      </Table.Tbody>
    </Table>
  );
}
