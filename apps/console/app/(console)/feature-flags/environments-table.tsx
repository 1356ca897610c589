'use client';

import Link from 'next/link';
import { Anchor, Table, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { EmptyTableRow } from '@/components/empty-table-row';
import type { Environment } from './flag.types';

export function EnvironmentsTable({ environments }: { environments: Environment[] }) {
  return (
    <Table striped aria-label="Environments">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Environment</Table.Th>
          <Table.Th>ID</Table.Th>
          <Table.Th>Revision</Table.Th>
          <Table.Th>Last change</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {environments.length === 0 && <EmptyTableRow columns={4}>No environments yet.</EmptyTableRow>}
        {environments.map((environment) => (
          <Table.Tr key={environment.id}>
            <Table.Td>
              <Anchor component={Link} href={`/feature-flags/${encodeURIComponent(environment.id)}`}>
                {environment.name}
              </Anchor>
            </Table.Td>
            <Table.Td>
              <Text ff="monospace" size="xs">
                {environment.id}
              </Text>
            </Table.Td>
            <Table.Td>{environment.revision}</Table.Td>
            <Table.Td>{formatTimestamp(environment.updatedAt)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
