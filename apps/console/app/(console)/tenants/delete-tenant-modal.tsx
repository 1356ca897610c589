'use client';

import { useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { useLastPresent } from '@/lib/use-last-present';
import { ConfirmModal } from '@/components/confirm-modal';
import { deleteTenantAction } from './actions';
import type { Tenant } from './tenant.types';

interface DeleteTenantModalProps {
  tenant: Tenant | null;
  onClose: () => void;
}

export function DeleteTenantModal({ tenant: selected, onClose }: DeleteTenantModalProps) {
  const tenant = useLastPresent(selected);
  const router = useRouter();
  const [pending, startTransition] = useTransition();

  const confirm = () => {
    if (!tenant) return;
    startTransition(async () => {
      const result = await deleteTenantAction(tenant.id, tenant.etag);
      if (result.ok) notifySuccess(`Tenant ${tenant.name} deleted.`);
      else notifyApiError(result.error);
      onClose();
      router.refresh();
    });
  };

  return (
    <ConfirmModal
      opened={selected !== null}
      onClose={onClose}
      title="Delete tenant"
      confirmLabel="Delete tenant"
      pending={pending}
      onConfirm={confirm}
    >
      Delete <b>{tenant?.name}</b> ({tenant?.externalId})? Its endpoints stop receiving webhooks. The external ID stays
      reserved for 90 days.
    </ConfirmModal>
  );
}
