'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { ConfirmModal } from '@/components/confirm-modal';
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
      <ConfirmModal
        opened={opened}
        onClose={close}
        title="Delete endpoint"
        confirmLabel="Delete endpoint"
        pending={pending}
        onConfirm={confirm}
      >
        Delete <b>{endpoint.name}</b>? It receives no new messages and its deliveries that have not started are
        canceled. This cannot be undone.
      </ConfirmModal>
    </>
  );
}
