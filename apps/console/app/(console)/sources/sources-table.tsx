'use client';

import Link from 'next/link';
import { Anchor, Badge, Table, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { CopyableId } from '@/components/copyable-id';
import { EmptyTableRow } from '@/components/empty-table-row';
import { EventTypeMapping } from './event-type-mapping';
import { SourceStatusBadge } from './source-status-badge';
import type { Source } from './source.types';

interface SourcesTableProps {
  sources: Source[];
  tenantNames: ReadonlyMap<string, string>;
  emptyText: string;
}

export function SourcesTable({ sources, tenantNames, emptyText }: SourcesTableProps) {
  return (
    <Table.ScrollContainer minWidth={900}>
      <Table striped highlightOnHover verticalSpacing="sm" aria-label="Sources">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Tenant</Table.Th>
            <Table.Th>Kind</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Event type</Table.Th>
            <Table.Th>Created</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {sources.length === 0 && <EmptyTableRow columns={6}>{emptyText}</EmptyTableRow>}
          {sources.map((source) => (
            <Table.Tr key={source.id} data-source-id={source.id}>
              <Table.Td>
                <Anchor component={Link} href={`/sources/${encodeURIComponent(source.id)}`}>
                  {source.name}
                </Anchor>
                <CopyableId id={source.id} label={source.name} />
              </Table.Td>
              <Table.Td>
                <Anchor component={Link} size="sm" href={`/tenants/${encodeURIComponent(source.tenantId)}/endpoints`}>
                  {tenantNames.get(source.tenantId) ?? source.tenantId}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <Badge variant="outline" color="gray" tt="none" data-testid="source-kind">
                  {source.kind}
                </Badge>
              </Table.Td>
              <Table.Td>
                <SourceStatusBadge status={source.status} />
              </Table.Td>
              <Table.Td>
                <EventTypeMapping source={source} />
              </Table.Td>
              <Table.Td>
                <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                  {formatTimestamp(source.createdAt)}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
