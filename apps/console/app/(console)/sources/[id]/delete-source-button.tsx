'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { listHref } from '@/lib/list-href';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { ConfirmModal } from '@/components/confirm-modal';
import { deleteSourceAction } from '../actions';
import type { Source } from '../source.types';

/** Deletes after confirming, then returns to the tenant's sources. */
export function DeleteSourceButton({ source }: { source: Source }) {
  const router = useRouter();
  const [opened, { open, close }] = useDisclosure(false);
  const [pending, startTransition] = useTransition();

  const confirm = () =>
    startTransition(async () => {
      const result = await deleteSourceAction(source.id, source.etag);
      if (!result.ok) {
        notifyApiError(result.error);
        close();
        router.refresh();
        return;
      }
      notifySuccess(`Source ${source.name} deleted.`);
      router.push(listHref('/sources', { tenant: source.tenantId }));
    });

  return (
    <>
      <Button variant="light" color="red" onClick={open}>
        Delete
      </Button>
      <ConfirmModal
        opened={opened}
        onClose={close}
        title="Delete source"
        confirmLabel="Delete source"
        pending={pending}
        onConfirm={confirm}
      >
        Delete <b>{source.name}</b>? Its receive URL stops answering at once, a URL still in a rotation overlap too: the
        provider&apos;s requests get 404 from now on and nothing more is captured. Messages captured already stay. This
        cannot be undone.
      </ConfirmModal>
    </>
  );
}
