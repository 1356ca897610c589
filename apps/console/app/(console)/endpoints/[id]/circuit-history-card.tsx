'use client';

import { Alert, Badge, Group, Stack, Table, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { formatTimestamp } from '@/lib/format';
import { EmptyTableRow } from '@/components/empty-table-row';
import type { OperationalEvent, OperationalEventPage } from '../../events/event.types';

const STATES: Record<string, { label: string; color: string }> = {
  'webhooks.endpoint.failing': { label: 'circuit opened', color: 'red' },
  'webhooks.endpoint.recovered': { label: 'recovered', color: 'teal' },
  'webhooks.endpoint.disabled': { label: 'disabled', color: 'gray' },
  'webhooks.endpoint.held': { label: 'held (paused)', color: 'orange' },
};

/** What caused the change: the last error, the failures behind it, the next probe. */
function cause(event: OperationalEvent): string {
  const { data } = event;
  switch (event.type) {
    case 'webhooks.endpoint.failing':
      return `${String(data['failures'])} failures in a row, last ${String(data['last_error'])}; probe at ${formatTimestamp(String(data['next_probe_at']))}`;
    case 'webhooks.endpoint.recovered':
      return `after ${String(data['failures_before'])} failures${data['last_error'] ? `, last ${String(data['last_error'])}` : ''}`;
    case 'webhooks.endpoint.held':
      return `ordered delivery ${String(data['delivery_id'])} ${String(data['delivery_status'])}: ${String(data['reason'])}`;
    default:
      return String(data['reason'] ?? '');
  }
}

/**
 * The endpoint's circuit over the last 30 days, newest first, from the operational events about it (opened,
 * recovered, disabled, held by an ordered delivery that failed) with the errors that caused each change.
 */
export function CircuitHistoryCard({ events }: { events: ActionResult<OperationalEventPage> }) {
  // Read newest first from the API: the newest page holds the latest changes.
  const changes = events.ok ? events.data.nodes.filter((event) => event.type in STATES) : [];
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Circuit history
      </Title>
      {!events.ok ? (
        <Alert color="red" title="Could not load the circuit history">
          {events.error.message}
        </Alert>
      ) : (
        <Table aria-label="Circuit history">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Change</Table.Th>
              <Table.Th>Why</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {changes.length === 0 && <EmptyTableRow columns={3}>No circuit changes in the last 30 days.</EmptyTableRow>}
            {changes.map((event) => (
              <Table.Tr key={event.id}>
                <Table.Td>
                  <Text size="sm">{formatTimestamp(event.createdAt)}</Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    <Badge color={STATES[event.type]!.color} variant="light">
                      {STATES[event.type]!.label}
                    </Badge>
                    {event.count > 1 && (
                      <Text size="xs" c="dimmed">
                        ×{event.count}
                      </Text>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{cause(event)}</Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
