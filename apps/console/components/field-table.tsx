'use client';

import type { ReactNode } from 'react';
import { Table } from '@mantine/core';

export interface Field {
  label: string;
  value: ReactNode;
}

/** Read-only fields of one resource as label/value rows. */
export function FieldTable({ label, fields }: { label: string; fields: Field[] }) {
  return (
    <Table variant="vertical" layout="fixed" withTableBorder aria-label={label}>
      <Table.Tbody>
        {fields.map((field) => (
          <Table.Tr key={field.label}>
            <Table.Th w={200}>{field.label}</Table.Th>
            <Table.Td>{field.value}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
