'use client';

import { Fragment, useState, useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Badge, Button, Group, Table, Text } from '@mantine/core';
import { formatDuration, formatTimestamp, formatTimestampSeconds } from '@/lib/format';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { EmptyTableRow } from '@/components/empty-table-row';
import { retryDeliveryAction } from '../actions';
import type { Delivery } from '../subscription.types';

const STATUS_COLORS: Record<string, string> = {
  pending: 'blue',
  succeeded: 'green',
  failed: 'red',
  canceled: 'gray',
};

function RetryButton({ subscriptionId, delivery }: { subscriptionId: string; delivery: Delivery }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const retry = () =>
    startTransition(async () => {
      const result = await retryDeliveryAction(subscriptionId, delivery.id);
      if (result.ok) notifySuccess(`Retry queued (${result.data.id}).`);
      else notifyApiError(result.error);
      router.refresh();
    });
  return (
    <Button size="compact-sm" variant="light" loading={pending} onClick={retry} aria-label={`Retry ${delivery.id}`}>
      Retry
    </Button>
  );
}

/** Newest first; each row opens to its attempts. */
export function DeliveriesTable({ subscriptionId, deliveries }: { subscriptionId: string; deliveries: Delivery[] }) {
  const [open, setOpen] = useState<Set<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  return (
    <Table aria-label="Deliveries">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Event</Table.Th>
          <Table.Th>Sequence</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Attempts</Table.Th>
          <Table.Th>Next attempt</Table.Th>
          <Table.Th>Created</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {deliveries.length === 0 && <EmptyTableRow columns={7}>No deliveries in the last 30 days.</EmptyTableRow>}
        {deliveries.map((delivery) => (
          <Fragment key={delivery.id}>
            <Table.Tr data-testid={`delivery-${delivery.id}`}>
              <Table.Td>
                <Text size="sm">{delivery.eventType}</Text>
                <Text size="xs" c="dimmed" ff="monospace">
                  {delivery.eventId}
                </Text>
              </Table.Td>
              <Table.Td>{delivery.sequence}</Table.Td>
              <Table.Td>
                <Group gap={4}>
                  <Badge color={STATUS_COLORS[delivery.status] ?? 'gray'}>{delivery.status}</Badge>
                  {delivery.trigger === 'manual' && <Badge variant="outline">manual retry</Badge>}
                  {delivery.releasedAt && <Badge variant="outline">out of order</Badge>}
                </Group>
              </Table.Td>
              <Table.Td>{delivery.attemptCount}</Table.Td>
              <Table.Td>
                {delivery.nextAttemptAt
                  ? formatTimestamp(delivery.nextAttemptAt)
                  : delivery.status === 'pending'
                    ? 'after the earlier events'
                    : '—'}
              </Table.Td>
              <Table.Td>{formatTimestamp(delivery.createdAt)}</Table.Td>
              <Table.Td>
                <Group gap={4} wrap="nowrap">
                  <Button
                    size="compact-sm"
                    variant="subtle"
                    onClick={() => toggle(delivery.id)}
                    aria-expanded={open.has(delivery.id)}
                    aria-label={`Attempts of ${delivery.id}`}
                  >
                    {open.has(delivery.id) ? 'Hide attempts' : 'Attempts'}
                  </Button>
                  <RetryButton subscriptionId={subscriptionId} delivery={delivery} />
                </Group>
              </Table.Td>
            </Table.Tr>
            {open.has(delivery.id) && (
              <Table.Tr>
                <Table.Td colSpan={7}>
                  <Table aria-label={`Attempts of ${delivery.id}`}>
                    <Table.Thead>
                      <Table.Tr>
                        <Table.Th>#</Table.Th>
                        <Table.Th>Time</Table.Th>
                        <Table.Th>Status code</Table.Th>
                        <Table.Th>Error</Table.Th>
                        <Table.Th>Duration</Table.Th>
                      </Table.Tr>
                    </Table.Thead>
                    <Table.Tbody>
                      {delivery.attempts.length === 0 && <EmptyTableRow columns={5}>No attempt yet.</EmptyTableRow>}
                      {delivery.attempts.map((attempt) => (
                        <Table.Tr key={attempt.id}>
                          <Table.Td>{attempt.attempt}</Table.Td>
                          <Table.Td>{formatTimestampSeconds(attempt.attemptedAt)}</Table.Td>
                          <Table.Td>{attempt.statusCode ?? '—'}</Table.Td>
                          <Table.Td>
                            {attempt.errorKind ? `${attempt.errorKind}: ${attempt.error ?? ''}` : 'acknowledged'}
                          </Table.Td>
                          <Table.Td>{formatDuration(attempt.durationMs)}</Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                </Table.Td>
              </Table.Tr>
            )}
          </Fragment>
        ))}
      </Table.Tbody>
    </Table>
  );
}
