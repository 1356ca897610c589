'use client';

import Link from 'next/link';
import { Anchor, Badge, Group, Stack, Table, Text, Title } from '@mantine/core';
import { formatTimestampSeconds } from '@/lib/format';
import { listHref } from '@/lib/list-href';
import { EmptyTableRow } from '@/components/empty-table-row';
import type { OperationalEvent } from '../../events/event.types';
import { RECENT_REJECTIONS, REJECTION_REASONS } from '../source.types';

interface RecentRejectionsCardProps {
  sourceId: string;
  /** Its newest webhooks.source.rejected events of the last 30 days, newest first (a burst within a minute is one). */
  rejections: OperationalEvent[];
}

function reasonOf(event: OperationalEvent): string {
  const reason = event.data['reason'];
  return typeof reason === 'string' ? reason : 'unknown';
}

/** Requests by reason over every rejection read (a burst folds per reason, so its count is all of that reason). */
function totalsByReason(rejections: readonly OperationalEvent[]): [string, number][] {
  const totals = new Map<string, number>();
  for (const event of rejections) totals.set(reasonOf(event), (totals.get(reasonOf(event)) ?? 0) + event.count);
  return [...totals].sort((a, b) => b[1] - a[1]);
}

function requests(count: number): string {
  return count === 1 ? '1 request' : `${count} requests`;
}

/** Requests the verifier refused, newest first, with the reason and how many a burst folded in. */
export function RecentRejectionsCard({ sourceId, rejections }: RecentRejectionsCardProps) {
  const totals = totalsByReason(rejections);
  return (
    <Stack gap="xs">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2} size="h3">
            Recent rejections
          </Title>
          <Text size="sm" c="dimmed">
            Requests that did not verify (answered 401) over the last 30 days, newest first. Rejections for the same
            reason within a minute of each other fold into one row with their count.
            {rejections.length < RECENT_REJECTIONS
              ? ''
              : ` The newest ${RECENT_REJECTIONS} are shown; the events feed has all.`}
          </Text>
        </div>
        <Anchor
          component={Link}
          size="sm"
          href={listHref('/events', { type: 'webhooks.source.rejected', resource: sourceId })}
        >
          In the events feed
        </Anchor>
      </Group>
      {totals.length > 0 && (
        <Group gap="xs" data-testid="rejection-totals">
          {totals.map(([reason, count]) => (
            <Badge key={reason} color="orange" variant="light" tt="none">
              {reason}: {requests(count)}
            </Badge>
          ))}
        </Group>
      )}
      <Table.ScrollContainer minWidth={820}>
        <Table striped highlightOnHover verticalSpacing="xs" aria-label="Recent rejections">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>First request</Table.Th>
              <Table.Th miw={170}>Reason</Table.Th>
              <Table.Th>Meaning</Table.Th>
              <Table.Th ta="right">Requests</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rejections.length === 0 && (
              <EmptyTableRow columns={4}>No rejected requests in the last 30 days.</EmptyTableRow>
            )}
            {rejections.map((event) => (
              <Table.Tr key={event.id} data-event-id={event.id}>
                <Table.Td>
                  <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                    {formatTimestampSeconds(event.createdAt)}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Badge color="orange" variant="light" tt="none" data-testid="rejection-reason">
                    {reasonOf(event)}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{REJECTION_REASONS[reasonOf(event)] ?? 'See docs/sources.md'}</Text>
                </Table.Td>
                <Table.Td ta="right" data-testid="rejection-count">
                  {event.count}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
