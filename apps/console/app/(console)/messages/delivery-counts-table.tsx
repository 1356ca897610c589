'use client';

import { Table } from '@mantine/core';
import { DELIVERY_COUNT_LABELS, type DeliveryCounts } from './message.types';

/** How many of the message's original deliveries are in each status, left to right as a delivery moves. */
export function DeliveryCountsTable({ counts }: { counts: DeliveryCounts }) {
  return (
    <Table.ScrollContainer minWidth={560}>
      <Table withTableBorder withColumnBorders aria-label="Delivery counts" ta="center">
        <Table.Thead>
          <Table.Tr>
            {DELIVERY_COUNT_LABELS.map(({ key, label }) => (
              <Table.Th key={key} ta="center">
                {label}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          <Table.Tr>
            {DELIVERY_COUNT_LABELS.map(({ key, label }) => (
              <Table.Td
                key={key}
                data-testid={`delivery-count-${key}`}
                aria-label={label}
                fw={counts[key] > 0 ? 700 : 400}
              >
                {counts[key]}
              </Table.Td>
            ))}
          </Table.Tr>
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
