'use client';

import { Badge, Table, Text } from '@mantine/core';
import type { Limit } from './settings.types';

const numberFormat = new Intl.NumberFormat('en-US');

export function LimitsTable({ limits }: { limits: Limit[] }) {
  return (
    <Table.ScrollContainer minWidth={560}>
      <Table striped verticalSpacing="xs" aria-label="Limits">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Limit</Table.Th>
            <Table.Th ta="right">Value</Table.Th>
            <Table.Th>Unit</Table.Th>
            <Table.Th>Enforcement</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {limits.map((limit) => (
            <Table.Tr key={limit.name}>
              <Table.Td ff="monospace">{limit.name}</Table.Td>
              <Table.Td ta="right">{numberFormat.format(limit.value)}</Table.Td>
              <Table.Td>{limit.unit}</Table.Td>
              <Table.Td>
                {limit.measured ? (
                  <Text size="sm" c="dimmed">
                    measured
                  </Text>
                ) : (
                  <Badge color="yellow" variant="light">
                    not measured
                  </Badge>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
