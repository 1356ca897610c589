'use client';

import Link from 'next/link';
import { Anchor, Table, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { EmptyTableRow } from '@/components/empty-table-row';
import { ReplayProgress } from './replay-progress';
import { ReplayStatusBadge } from './replay-status-badge';
import type { Replay } from './replay.types';

interface ReplaysTableProps {
  replays: Replay[];
  /** Names by endpoint ID; null on the endpoint's own page, where the column is left out. */
  endpointNames: ReadonlyMap<string, string> | null;
  emptyText: string;
  label?: string;
}

/** Replays with their status, progress bars and cost; each opens its page. */
export function ReplaysTable({ replays, endpointNames, emptyText, label = 'Replays' }: ReplaysTableProps) {
  const columns = endpointNames ? 6 : 5;
  return (
    <Table.ScrollContainer minWidth={880}>
      <Table striped highlightOnHover verticalSpacing="sm" aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Started</Table.Th>
            <Table.Th>Replay</Table.Th>
            {endpointNames && <Table.Th>Endpoint</Table.Th>}
            <Table.Th miw={110}>Status</Table.Th>
            <Table.Th w={220}>Progress</Table.Th>
            <Table.Th ta="right">Cost (USD)</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {replays.length === 0 && <EmptyTableRow columns={columns}>{emptyText}</EmptyTableRow>}
          {replays.map((replay) => (
            <Table.Tr key={replay.id} data-replay-id={replay.id}>
              <Table.Td>
                <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                  {formatTimestamp(replay.createdAt)}
                </Text>
              </Table.Td>
              <Table.Td>
                <Anchor component={Link} href={`/replays/${encodeURIComponent(replay.id)}`} size="sm" ff="monospace">
                  {replay.id}
                </Anchor>
                <Text size="xs" c="dimmed">
                  {replay.eventType ?? 'every event type'}
                  {replay.maxCostUsd !== null ? ` · bound ${replay.maxCostUsd} USD` : ''}
                </Text>
              </Table.Td>
              {endpointNames && (
                <Table.Td>
                  <Anchor component={Link} size="sm" href={`/endpoints/${encodeURIComponent(replay.endpointId)}`}>
                    {endpointNames.get(replay.endpointId) ?? replay.endpointId}
                  </Anchor>
                </Table.Td>
              )}
              <Table.Td>
                <ReplayStatusBadge replay={replay} />
                {replay.reason && (
                  <Text size="xs" c="dimmed">
                    {replay.reason}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <ReplayProgress counts={replay.counts} compact />
              </Table.Td>
              <Table.Td ta="right">
                <Text size="sm">{replay.costUsd}</Text>
                <Text size="xs" c="dimmed">
                  of {replay.estimate.costUsd} estimated
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
