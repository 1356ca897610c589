'use client';

import { useOptimistic, useState, useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Code, Group, Modal, Stack, Switch, Table, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { formatTimestamp } from '@/lib/format';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { ConfirmModal } from '@/components/confirm-modal';
import { EmptyTableRow } from '@/components/empty-table-row';
import { deleteFlagAction, putFlagAction } from '../actions';
import type { Flag } from '../flag.types';
import { FlagForm } from './flag-form';

/** A toggle that changes only `enabled` (with the flag's ETag, so a change made elsewhere is not overwritten). */
function FlagToggle({ flag }: { flag: Flag }) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  // Shows the new position at once; the refreshed list (or the old one, on a refusal) takes over when done.
  const [checked, setChecked] = useOptimistic(flag.enabled);
  const toggle = (enabled: boolean) =>
    startTransition(async () => {
      setChecked(enabled);
      const value = flag.value === 'null' ? '' : flag.value;
      const result = await putFlagAction(
        flag.environmentId,
        { key: flag.key, enabled, description: flag.description, value, etag: flag.etag },
        null,
      );
      if (result.ok) notifySuccess(`${flag.key} turned ${enabled ? 'on' : 'off'} (revision ${result.data.revision}).`);
      else notifyApiError(result.error);
      router.refresh();
    });
  return (
    <Switch
      checked={checked}
      disabled={pending}
      onChange={(event) => toggle(event.currentTarget.checked)}
      aria-label={`Enabled: ${flag.key}`}
    />
  );
}

function DeleteFlagButton({ flag }: { flag: Flag }) {
  const router = useRouter();
  const [opened, { open, close }] = useDisclosure(false);
  const [pending, startTransition] = useTransition();
  const confirm = () =>
    startTransition(async () => {
      const result = await deleteFlagAction(flag.environmentId, flag.key, flag.etag);
      if (result.ok) notifySuccess(`Flag ${flag.key} deleted.`);
      else notifyApiError(result.error);
      close();
      router.refresh();
    });
  return (
    <>
      <Button size="compact-sm" variant="subtle" color="red" onClick={open} aria-label={`Delete ${flag.key}`}>
        Delete
      </Button>
      <ConfirmModal
        opened={opened}
        onClose={close}
        title="Delete flag"
        confirmLabel="Delete flag"
        pending={pending}
        onConfirm={confirm}
      >
        Delete <b>{flag.key}</b>? Subscribers get a feature_flags.flag.updated event with change deleted.
      </ConfirmModal>
    </>
  );
}

/** The environment's flags with a toggle each, an editor and a delete button; and the form for a new flag. */
export function FlagsTable({ environmentId, flags }: { environmentId: string; flags: Flag[] }) {
  const router = useRouter();
  const [editing, setEditing] = useState<Flag | 'new' | null>(null);
  const close = (saved: Flag | null) => {
    setEditing(null);
    if (saved) {
      notifySuccess(`Flag ${saved.key} saved (revision ${saved.revision}).`);
      router.refresh();
    }
  };
  return (
    <Stack>
      <Group justify="flex-end">
        <Button onClick={() => setEditing('new')}>New flag</Button>
      </Group>
      <Table striped aria-label="Flags">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Key</Table.Th>
            <Table.Th>Enabled</Table.Th>
            <Table.Th>Value</Table.Th>
            <Table.Th>Description</Table.Th>
            <Table.Th>Revision</Table.Th>
            <Table.Th>Changed</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {flags.length === 0 && <EmptyTableRow columns={7}>No flags yet.</EmptyTableRow>}
          {flags.map((flag) => (
            <Table.Tr key={flag.key} data-testid={`flag-${flag.key}`}>
              <Table.Td>
                <Text ff="monospace" size="sm">
                  {flag.key}
                </Text>
              </Table.Td>
              <Table.Td>
                <FlagToggle flag={flag} />
              </Table.Td>
              <Table.Td>
                <Code>{flag.value.length > 60 ? `${flag.value.slice(0, 59)}…` : flag.value}</Code>
              </Table.Td>
              <Table.Td>{flag.description}</Table.Td>
              <Table.Td>{flag.revision}</Table.Td>
              <Table.Td>
                <Text size="xs">{formatTimestamp(flag.updatedAt)}</Text>
                <Text size="xs" c="dimmed" ff="monospace">
                  {flag.updatedBy}
                </Text>
              </Table.Td>
              <Table.Td>
                <Group gap={4} wrap="nowrap">
                  <Button
                    size="compact-sm"
                    variant="subtle"
                    onClick={() => setEditing(flag)}
                    aria-label={`Edit ${flag.key}`}
                  >
                    Edit
                  </Button>
                  <DeleteFlagButton flag={flag} />
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === 'new' || editing === null ? 'New flag' : `Edit ${editing.key}`}
        size="lg"
      >
        {editing !== null && (
          <FlagForm environmentId={environmentId} flag={editing === 'new' ? null : editing} onDone={close} />
        )}
      </Modal>
    </Stack>
  );
}
