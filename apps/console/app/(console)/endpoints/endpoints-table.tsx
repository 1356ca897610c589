'use client';

import Link from 'next/link';
import { Anchor, Table, Text } from '@mantine/core';
import { CopyableId } from '@/components/copyable-id';
import { EmptyTableRow } from '@/components/empty-table-row';
import { HealthBadge } from './health-badge';
import { StatusBadge } from './status-badge';
import type { EndpointRow } from './endpoint-row';

/** The event type patterns an endpoint subscribes to, as words: `*` alone is every event type. */
export function subscribedTo(events: readonly string[]): string {
  if (events.length === 1 && events[0] === '*') return 'all event types';
  return events.join(', ');
}

interface EndpointsTableProps {
  endpoints: EndpointRow[];
  /** Names by tenant ID: given, the table has a Tenant column (the list spans tenants). */
  tenantNames?: ReadonlyMap<string, string>;
  /** What the empty table says. */
  emptyText?: string;
}

export function EndpointsTable({ endpoints, tenantNames, emptyText = 'No endpoints yet.' }: EndpointsTableProps) {
  const columns = tenantNames ? 6 : 5;
  return (
    <Table.ScrollContainer minWidth={760}>
      <Table striped highlightOnHover verticalSpacing="sm" aria-label="Endpoints">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            {tenantNames && <Table.Th>Tenant</Table.Th>}
            <Table.Th>URL</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Health</Table.Th>
            <Table.Th>Subscribed to</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {endpoints.length === 0 && <EmptyTableRow columns={columns}>{emptyText}</EmptyTableRow>}
          {endpoints.map((endpoint) => (
            <Table.Tr key={endpoint.id} data-endpoint-id={endpoint.id}>
              <Table.Td>
                <Anchor component={Link} href={`/endpoints/${encodeURIComponent(endpoint.id)}`}>
                  {endpoint.name}
                </Anchor>
                <CopyableId id={endpoint.id} label={endpoint.name} />
              </Table.Td>
              {tenantNames && (
                <Table.Td>
                  <Anchor
                    component={Link}
                    size="sm"
                    href={`/tenants/${encodeURIComponent(endpoint.tenantId)}/endpoints`}
                  >
                    {tenantNames.get(endpoint.tenantId) ?? endpoint.tenantId}
                  </Anchor>
                </Table.Td>
              )}
              <Table.Td maw={360}>
                <Text ff="monospace" size="sm" truncate="end" title={endpoint.maskedUrl}>
                  {endpoint.maskedUrl}
                </Text>
              </Table.Td>
              <Table.Td>
                <StatusBadge endpoint={endpoint} />
              </Table.Td>
              <Table.Td>
                <HealthBadge health={endpoint.health} />
              </Table.Td>
              <Table.Td maw={260}>
                <Text size="sm" truncate="end" title={endpoint.events.join(', ')}>
                  {subscribedTo(endpoint.events)}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
