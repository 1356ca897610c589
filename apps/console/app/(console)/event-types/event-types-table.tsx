'use client';

import { useState } from 'react';
import { Badge, Button, Code, Group, Modal, Table, Text } from '@mantine/core';
import { CopyableId } from '@/components/copyable-id';
import { EmptyTableRow } from '@/components/empty-table-row';
import { useLastPresent } from '@/lib/use-last-present';
import { ArchiveButton } from './archive-button';
import { EventTypeForm } from './event-type-form';
import type { EventType } from './event-type.types';

export function EventTypesTable({
  eventTypes,
  emptyText = 'No event types yet.',
}: {
  eventTypes: EventType[];
  emptyText?: string;
}) {
  const [editing, setEditing] = useState<EventType | null>(null);
  const shownInEditor = useLastPresent(editing);

  return (
    <>
      <Table.ScrollContainer minWidth={760}>
        <Table striped highlightOnHover verticalSpacing="sm" aria-label="Event types">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Description</Table.Th>
              <Table.Th>Example</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {eventTypes.length === 0 && <EmptyTableRow columns={4}>{emptyText}</EmptyTableRow>}
            {eventTypes.map((eventType) => (
              <Table.Tr key={eventType.id} data-event-type-id={eventType.id}>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Text ff="monospace" size="sm">
                      {eventType.name}
                    </Text>
                    {eventType.archived && (
                      <Badge color="gray" variant="filled" size="sm">
                        archived
                      </Badge>
                    )}
                  </Group>
                  <CopyableId id={eventType.id} label={eventType.name} />
                </Table.Td>
                <Table.Td maw={320}>
                  <Text size="sm" lineClamp={3} c={eventType.description ? undefined : 'dimmed'}>
                    {eventType.description || 'No description'}
                  </Text>
                </Table.Td>
                <Table.Td maw={360}>
                  {eventType.example === null ? (
                    <Text size="sm" c="dimmed">
                      none
                    </Text>
                  ) : (
                    <Code block mah={160} style={{ overflow: 'auto' }} data-testid="event-type-example">
                      {eventType.example}
                    </Code>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      variant="light"
                      onClick={() => setEditing(eventType)}
                      aria-label={`Edit ${eventType.name}`}
                    >
                      Edit
                    </Button>
                    <ArchiveButton eventType={eventType} />
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={`Edit event type ${shownInEditor?.name ?? ''}`}
        size="xl"
      >
        {shownInEditor && (
          <EventTypeForm key={shownInEditor.etag} eventType={shownInEditor} onDone={() => setEditing(null)} />
        )}
      </Modal>
    </>
  );
}
