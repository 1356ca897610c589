'use client';

import Link from 'next/link';
import { Anchor, Table, Text } from '@mantine/core';
import { CircuitBadge, StatusBadge } from './badges';
import type { PortalEndpoint } from './portal.types';

/** The tenant's endpoints with their status and circuit; each opens its page. */
export function EndpointsTable({ endpoints }: { endpoints: PortalEndpoint[] }) {
  return (
    <Table striped data-testid="portal-endpoints">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Name</Table.Th>
          <Table.Th>URL</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Circuit</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {endpoints.length === 0 ? (
          <Table.Tr>
            <Table.Td colSpan={4}>No endpoints yet.</Table.Td>
          </Table.Tr>
        ) : (
          endpoints.map((endpoint) => (
            <Table.Tr key={endpoint.id}>
              <Table.Td>
                <Anchor component={Link} href={`/portal/endpoints/${endpoint.id}`}>
                  {endpoint.name}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <Text size="sm" ff="monospace">
                  {endpoint.deliveryMode === 'stream' ? 'stream (your receiver connects)' : endpoint.url}
                </Text>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={endpoint.status} />
              </Table.Td>
              <Table.Td>
                <CircuitBadge circuit={endpoint.health.circuit} />
              </Table.Td>
            </Table.Tr>
          ))
        )}
      </Table.Tbody>
    </Table>
  );
}
