'use client';

import Link from 'next/link';
import { Anchor, Group, Stack, Table, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { formatTimestamp } from '@/lib/format';
import { listHref } from '@/lib/list-href';
import { EmptyTableRow } from '@/components/empty-table-row';
import { DeliveryStatusBadge } from '../../deliveries/delivery-status-badge';
import { lastResult, type Delivery } from '../../deliveries/delivery.types';

interface RecentDeliveriesCardProps {
  endpointId: string;
  recent: ActionResult<Delivery[]>;
}

/** Which deliveries the card shows: the API reads the last 30 days newest first. */
function describe(recent: ActionResult<Delivery[]>): string {
  const shown = recent.ok && recent.data.length > 0 ? `The newest ${recent.data.length} deliveries` : 'Deliveries';
  return `${shown} of the last 30 days, newest first.`;
}

/** The endpoint's newest deliveries of every message and generation, newest first, each linked to its message. */
export function RecentDeliveriesCard({ endpointId, recent }: RecentDeliveriesCardProps) {
  return (
    <Stack gap="xs">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2} size="h3">
            Recent deliveries
          </Title>
          <Text size="sm" c="dimmed">
            {describe(recent)}
          </Text>
        </div>
        <Anchor component={Link} size="sm" href={listHref('/dead-letters', { endpoint: endpointId })}>
          Failed deliveries of this endpoint
        </Anchor>
      </Group>
      {!recent.ok && (
        <Text size="sm" c="red">
          Could not load the deliveries: {knownProblem(recent.error)?.explanation ?? recent.error.message}
        </Text>
      )}
      {recent.ok && (
        <Table.ScrollContainer minWidth={820}>
          <Table striped highlightOnHover verticalSpacing="xs" aria-label="Recent deliveries">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Created</Table.Th>
                <Table.Th>Message</Table.Th>
                <Table.Th>Event type</Table.Th>
                <Table.Th>Generation</Table.Th>
                <Table.Th miw={110}>Status</Table.Th>
                <Table.Th ta="right">Attempts</Table.Th>
                <Table.Th>Last result</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {recent.data.length === 0 && (
                <EmptyTableRow columns={7}>No deliveries in the last 30 days.</EmptyTableRow>
              )}
              {recent.data.map((delivery) => (
                <Table.Tr key={delivery.id} data-delivery-id={delivery.id} data-message-id={delivery.messageId}>
                  <Table.Td>
                    <Text size="sm">{formatTimestamp(delivery.createdAt)}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Anchor
                      component={Link}
                      href={`/messages/${encodeURIComponent(delivery.messageId)}`}
                      size="sm"
                      ff="monospace"
                    >
                      {delivery.messageId}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" ff="monospace">
                      {delivery.eventType}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">
                      {delivery.kind === 'replay' ? `${delivery.generation} (replay)` : '0 (original)'}
                    </Text>
                    {delivery.sequence !== null && (
                      <Text size="xs" c="dimmed" data-testid="delivery-sequence">
                        {`sequence ${delivery.sequence}`}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <DeliveryStatusBadge status={delivery.status} />
                  </Table.Td>
                  <Table.Td ta="right">{delivery.attemptCount}</Table.Td>
                  <Table.Td>
                    <Text size="sm">{lastResult(delivery) ?? 'none yet'}</Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Stack>
  );
}
