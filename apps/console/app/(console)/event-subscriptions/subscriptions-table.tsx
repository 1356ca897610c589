'use client';

import Link from 'next/link';
import { Anchor, Badge, Table, Text } from '@mantine/core';
import { EmptyTableRow } from '@/components/empty-table-row';
import { FORMAT_LABELS, type Subscription } from './subscription.types';

interface SubscriptionsTableProps {
  subscriptions: Subscription[];
  environmentNames: ReadonlyMap<string, string>;
}

export function SubscriptionsTable({ subscriptions, environmentNames }: SubscriptionsTableProps) {
  return (
    <Table striped aria-label="Event subscriptions">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Subscription</Table.Th>
          <Table.Th>Format</Table.Th>
          <Table.Th>Events</Table.Th>
          <Table.Th>Environments</Table.Th>
          <Table.Th>Status</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {subscriptions.length === 0 && <EmptyTableRow columns={5}>No event subscriptions yet.</EmptyTableRow>}
        {subscriptions.map((subscription) => (
          <Table.Tr key={subscription.id}>
            <Table.Td style={{ wordBreak: 'break-all' }}>
              <Anchor component={Link} href={`/event-subscriptions/${encodeURIComponent(subscription.id)}`}>
                {subscription.description || subscription.url}
              </Anchor>
              {subscription.description && (
                <Text size="xs" c="dimmed">
                  {subscription.url}
                </Text>
              )}
            </Table.Td>
            <Table.Td>{FORMAT_LABELS[subscription.format] ?? subscription.format}</Table.Td>
            <Table.Td>{subscription.events.join(', ')}</Table.Td>
            <Table.Td>{subscription.environmentIds.map((id) => environmentNames.get(id) ?? id).join(', ')}</Table.Td>
            <Table.Td>
              <Badge color={subscription.enabled ? 'green' : 'gray'}>
                {subscription.enabled ? 'enabled' : 'disabled'}
              </Badge>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
