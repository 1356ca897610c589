'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { deleteEndpointAction } from '../actions';
import type { Endpoint } from '../endpoint.types';

/** Deletes after confirming, then returns to the tenant's endpoints. */
export function DeleteEndpointButton({ endpoint }: { endpoint: Endpoint }) {
  const router = useRouter();
  const [opened, { open, close }] = useDisclosure(false);
  const [pending, startTransition] = useTransition();

  const confirm = () =>
    startTransition(async () => {
      const result = await deleteEndpointAction(endpoint.id, endpoint.etag);
      if (!result.ok) {
        notifyApiError(result.error);
        close();
        router.refresh();
        return;
      }
      notifySuccess(`Endpoint ${endpoint.name} deleted.`);
      router.push(`/tenants/${encodeURIComponent(endpoint.tenantId)}/endpoints`);
    });

  return (
    <>
      <Button variant="light" color="red" onClick={open}>
        Delete
      </Button>
      <Modal opened={opened} onClose={close} title="Delete endpoint">
        <Stack>
          <Text>
            Delete <b>{endpoint.name}</b>? It receives no new messages and its deliveries that have not started are
            canceled. This cannot be undone.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={close} disabled={pending}>
              Cancel
            </Button>
            <Button color="red" onClick={confirm} loading={pending}>
              Delete endpoint
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
