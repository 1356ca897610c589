'use client';

import { useState } from 'react';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { Anchor, Button, Checkbox, Group, Modal, Table, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { useLastPresent } from '@/lib/use-last-present';
import { CopyableId } from '@/components/copyable-id';
import { EmptyTableRow } from '@/components/empty-table-row';
import { DeliveryStatusBadge } from '../deliveries/delivery-status-badge';
import { DeliveryTargetLine } from '../deliveries/delivery-target-line';
import { lastResult, type ListedDelivery } from '../deliveries/delivery.types';
import { ReplayForm } from '../deliveries/replay-form';
import { EarlierGenerations } from './earlier-generations';

interface DeadLettersTableProps {
  deliveries: ListedDelivery[];
  tenantNames: ReadonlyMap<string, string>;
  emptyText: string;
}

/**
 * Failed or expired deliveries with a checkbox each: replay one, or a selection, after seeing the price. A dead
 * letter a later replay delivered is marked repaired, linked to that replay on its message's page. Each row is a
 * failure's newest failed generation, with the earlier generations of its message to its endpoint beneath it.
 */
export function DeadLettersTable({ deliveries, tenantNames, emptyText }: DeadLettersTableProps) {
  const router = useRouter();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [replaying, setReplaying] = useState<string[] | null>(null);
  const shownInModal = useLastPresent(replaying);
  const onPage = deliveries.filter((delivery) => selected.has(delivery.id)).map((delivery) => delivery.id);
  const allPicked = deliveries.length > 0 && onPage.length === deliveries.length;

  const toggle = (id: string, picked: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (picked) next.add(id);
      else next.delete(id);
      return next;
    });

  return (
    <>
      <Group justify="space-between" mb="xs">
        <Text size="sm" c="dimmed">
          {onPage.length === 0 ? 'Pick deliveries to replay them together.' : `${onPage.length} selected`}
        </Text>
        <Button disabled={onPage.length === 0} onClick={() => setReplaying(onPage)}>
          {`Replay selected (${onPage.length})`}
        </Button>
      </Group>
      <Table.ScrollContainer minWidth={960}>
        <Table striped highlightOnHover verticalSpacing="sm" aria-label="Dead letters">
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={40}>
                <Checkbox
                  aria-label="Select every delivery on this page"
                  checked={allPicked}
                  indeterminate={onPage.length > 0 && !allPicked}
                  onChange={(event) =>
                    setSelected(new Set(event.currentTarget.checked ? deliveries.map((delivery) => delivery.id) : []))
                  }
                />
              </Table.Th>
              <Table.Th>Finished</Table.Th>
              <Table.Th>Delivery and event type</Table.Th>
              <Table.Th>Endpoint and tenant</Table.Th>
              <Table.Th miw={110}>Status</Table.Th>
              <Table.Th>Last result</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {deliveries.length === 0 && <EmptyTableRow columns={7}>{emptyText}</EmptyTableRow>}
            {deliveries.map((delivery) => (
              <Table.Tr key={delivery.id} data-delivery-id={delivery.id} data-message-id={delivery.messageId}>
                <Table.Td>
                  <Checkbox
                    aria-label={`Select ${delivery.id}`}
                    checked={selected.has(delivery.id)}
                    onChange={(event) => toggle(delivery.id, event.currentTarget.checked)}
                  />
                </Table.Td>
                <Table.Td>
                  <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                    {formatTimestamp(delivery.finishedAt ?? delivery.createdAt)}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <CopyableId id={delivery.id} label={`delivery ${delivery.id}`} />
                  <Text size="xs" c="dimmed">
                    {delivery.kind === 'replay' ? `replay, generation ${delivery.generation}` : 'original'} ·{' '}
                    <Text span size="xs" ff="monospace">
                      {delivery.eventType}
                    </Text>
                    {delivery.sequence !== null && ` · sequence ${delivery.sequence}`}
                  </Text>
                  <EarlierGenerations generations={delivery.earlierGenerations ?? []} />
                </Table.Td>
                <Table.Td maw={320}>
                  <DeliveryTargetLine delivery={delivery} />
                  <Text size="xs" c="dimmed">
                    <Anchor
                      component={Link}
                      size="xs"
                      c="dimmed"
                      href={`/tenants/${encodeURIComponent(delivery.tenantId)}/endpoints`}
                    >
                      {tenantNames.get(delivery.tenantId) ?? delivery.tenantId}
                    </Anchor>
                  </Text>
                </Table.Td>
                <Table.Td>
                  <DeliveryStatusBadge status={delivery.status} />
                  {delivery.repairedBy && (
                    <Text size="xs" mt={4} data-testid="delivery-repaired">
                      <Anchor
                        component={Link}
                        size="xs"
                        href={`/messages/${encodeURIComponent(delivery.messageId)}#${delivery.repairedBy}`}
                        aria-label={`Repaired by ${delivery.repairedBy}`}
                      >
                        repaired
                      </Anchor>{' '}
                      <Text span size="xs" c="dimmed">
                        by a replay
                      </Text>
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{lastResult(delivery) ?? 'none'}</Text>
                  <Text size="xs" c="dimmed">
                    {delivery.attemptCount === 1 ? '1 attempt' : `${delivery.attemptCount} attempts`}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      variant="light"
                      onClick={() => setReplaying([delivery.id])}
                      aria-label={`Replay ${delivery.id}`}
                    >
                      Replay
                    </Button>
                    <Button
                      size="xs"
                      variant="default"
                      component={Link}
                      href={`/messages/${encodeURIComponent(delivery.messageId)}`}
                      aria-label={`Open the message of ${delivery.id}`}
                    >
                      Message
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Modal
        opened={replaying !== null}
        onClose={() => setReplaying(null)}
        title={
          shownInModal?.length === 1
            ? `Replay delivery ${shownInModal[0]}`
            : `Replay ${shownInModal?.length ?? 0} deliveries`
        }
        size="lg"
      >
        {shownInModal && (
          <ReplayForm
            key={shownInModal.join(',')}
            deliveryIds={shownInModal}
            onClose={() => setReplaying(null)}
            onReplayed={() => {
              setSelected(new Set());
              router.refresh();
            }}
          />
        )}
      </Modal>
    </>
  );
}
