import { Table, Text } from '@mantine/core';

/** The one row a list table shows when it has nothing to list. */
export function EmptyTableRow({ columns, children }: { columns: number; children: string }) {
  return (
    <Table.Tr>
      <Table.Td colSpan={columns}>
        <Text c="dimmed" ta="center" py="md">
          {children}
        </Text>
      </Table.Td>
    </Table.Tr>
  );
}
