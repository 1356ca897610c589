'use client';

import { useState } from 'react';
import Link from 'next/link';
import { Badge, Button, Group, Modal, Table, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { valueText } from '@/lib/key-value-rows';
import { listHref } from '@/lib/list-href';
import { CopyableId } from '@/components/copyable-id';
import { EmptyTableRow } from '@/components/empty-table-row';
import { useLastPresent } from '@/lib/use-last-present';
import { DeleteTenantModal } from './delete-tenant-modal';
import { PortalSessionModal } from './portal-session-modal';
import { TenantForm } from './tenant-form';
import type { Tenant } from './tenant.types';

function MetadataBadges({ metadata }: { metadata: Record<string, unknown> }) {
  const entries = Object.entries(metadata);
  if (entries.length === 0)
    return (
      <Text size="sm" c="dimmed">
        none
      </Text>
    );
  return (
    <Group gap={4}>
      {entries.map(([key, value]) => (
        <Badge key={key} variant="outline" color="gray" tt="none">
          {key}={valueText(value)}
        </Badge>
      ))}
    </Group>
  );
}

export function TenantsTable({ tenants, emptyText = 'No tenants yet.' }: { tenants: Tenant[]; emptyText?: string }) {
  const [editing, setEditing] = useState<Tenant | null>(null);
  const [deleting, setDeleting] = useState<Tenant | null>(null);
  const [portal, setPortal] = useState<Tenant | null>(null);
  const shownInEditor = useLastPresent(editing);

  return (
    <>
      <Table.ScrollContainer minWidth={760}>
        <Table striped highlightOnHover verticalSpacing="sm" aria-label="Tenants">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>External ID and tenant ID</Table.Th>
              <Table.Th>Name</Table.Th>
              <Table.Th>Metadata</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {tenants.length === 0 && <EmptyTableRow columns={6}>{emptyText}</EmptyTableRow>}
            {tenants.map((tenant) => (
              <Table.Tr key={tenant.id} data-tenant-id={tenant.id}>
                <Table.Td>
                  <Text ff="monospace" size="sm">
                    {tenant.externalId}
                  </Text>
                  <CopyableId id={tenant.id} label={tenant.externalId} />
                </Table.Td>
                <Table.Td>{tenant.name}</Table.Td>
                <Table.Td>
                  <MetadataBadges metadata={tenant.metadata} />
                </Table.Td>
                <Table.Td>
                  {tenant.status === 'deleted' ? (
                    <Badge color="red" variant="light">
                      deleted
                    </Badge>
                  ) : (
                    <Badge color="green" variant="light">
                      {tenant.status}
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{formatTimestamp(tenant.createdAt)}</Text>
                </Table.Td>
                <Table.Td>
                  {tenant.status !== 'deleted' && (
                    <Group gap="xs" wrap="nowrap">
                      <Button
                        size="xs"
                        variant="light"
                        component={Link}
                        href={`/tenants/${encodeURIComponent(tenant.id)}/endpoints`}
                        aria-label={`Endpoints of ${tenant.externalId}`}
                      >
                        Endpoints
                      </Button>
                      <Button
                        size="xs"
                        variant="light"
                        component={Link}
                        href={listHref('/sources', { tenant: tenant.id })}
                        aria-label={`Sources of ${tenant.externalId}`}
                      >
                        Sources
                      </Button>
                      <Button
                        size="xs"
                        variant="light"
                        onClick={() => setPortal(tenant)}
                        aria-label={`Portal of ${tenant.externalId}`}
                      >
                        Portal
                      </Button>
                      <Button
                        size="xs"
                        variant="light"
                        onClick={() => setEditing(tenant)}
                        aria-label={`Edit ${tenant.externalId}`}
                      >
                        Edit
                      </Button>
                      <Button
                        size="xs"
                        variant="light"
                        color="red"
                        onClick={() => setDeleting(tenant)}
                        aria-label={`Delete ${tenant.externalId}`}
                      >
                        Delete
                      </Button>
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={`Edit tenant ${shownInEditor?.externalId ?? ''}`}
        size="lg"
      >
        {shownInEditor && (
          <TenantForm key={shownInEditor.etag} tenant={shownInEditor} onDone={() => setEditing(null)} />
        )}
      </Modal>
      <DeleteTenantModal tenant={deleting} onClose={() => setDeleting(null)} />
      <PortalSessionModal tenant={portal} onClose={() => setPortal(null)} />
    </>
  );
}
