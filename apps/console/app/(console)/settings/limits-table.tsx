'use client';

import { Table, Text } from '@mantine/core';
import { limitLabel, UNMEASURED_ENFORCEMENT } from './limit-labels';
import type { Limit } from './settings.types';

const numberFormat = new Intl.NumberFormat('en-US');

/** What the team uses of a limit now, where the API tells: by limit name. */
export type LimitUse = Readonly<Record<string, { value: number; note: string }>>;

function Enforcement({ limit }: { limit: Limit }) {
  if (limit.measured)
    return (
      <Text size="sm" c="dimmed">
        measured
      </Text>
    );
  const how = UNMEASURED_ENFORCEMENT[limit.name];
  return (
    <Text size="sm" c="dimmed">
      {how ?? 'stated, not measured by the service'}
    </Text>
  );
}

export function LimitsTable({ limits, use }: { limits: Limit[]; use: LimitUse }) {
  return (
    <Table.ScrollContainer minWidth={720}>
      <Table striped verticalSpacing="xs" aria-label="Limits">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Limit</Table.Th>
            <Table.Th ta="right">Value</Table.Th>
            <Table.Th>Unit</Table.Th>
            <Table.Th>In use now</Table.Th>
            <Table.Th>Enforcement</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {limits.map((limit) => {
            const used = use[limit.name];
            return (
              <Table.Tr key={limit.name} data-limit={limit.name}>
                <Table.Td>
                  <Text size="sm">{limitLabel(limit.name)}</Text>
                  <Text size="xs" c="dimmed" ff="monospace">
                    {limit.name}
                  </Text>
                </Table.Td>
                <Table.Td ta="right">{numberFormat.format(limit.value)}</Table.Td>
                <Table.Td>{limit.unit}</Table.Td>
                <Table.Td data-testid="limit-use">
                  {used ? (
                    <>
                      <Text size="sm">{`${numberFormat.format(used.value)} of ${numberFormat.format(limit.value)}`}</Text>
                      <Text size="xs" c="dimmed">
                        {used.note}
                      </Text>
                    </>
                  ) : null}
                </Table.Td>
                <Table.Td maw={360}>
                  <Enforcement limit={limit} />
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
