'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Stack, TextInput } from '@mantine/core';
import { fieldMessage, isFormLevel, type ActionResult, type ApiError } from '@/lib/api-error';
import { newRow, toRecord, toRows } from '@/lib/key-value-rows';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { MetadataEditor } from '@/components/metadata-editor';
import { FormActions } from '@/components/form-actions';
import { createTenantAction, updateTenantAction } from './actions';
import type { Tenant } from './tenant.types';

const FIELDS = ['external_id', 'name', 'metadata'] as const;

interface TenantFormProps {
  /** The tenant to edit; without one the form creates a tenant. */
  tenant?: Tenant;
  onDone: () => void;
}

export function TenantForm({ tenant, onDone }: TenantFormProps) {
  const router = useRouter();
  const [externalId, setExternalId] = useState(tenant?.externalId ?? '');
  const [name, setName] = useState(tenant?.name ?? '');
  const [rows, setRows] = useState(() => (tenant ? toRows(tenant.metadata) : [newRow()]));
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const metadata = toRecord(rows);
    if (!metadata.ok) {
      setError({ code: 'invalid_field', message: metadata.message, field: 'metadata' });
      return;
    }
    startTransition(async () => {
      const result: ActionResult<Tenant> = await callAction(() =>
        tenant
          ? updateTenantAction(tenant.id, tenant.etag, { name, metadata: metadata.record })
          : createTenantAction({ externalId, name, metadata: metadata.record }, idempotency.key),
      );
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (isFormLevel(result.error, FIELDS)) notifyApiError(result.error);
        if (result.error.code === 'revision_conflict') router.refresh();
        return;
      }
      notifySuccess(tenant ? `Tenant ${result.data.name} saved.` : `Tenant ${result.data.name} created.`);
      onDone();
      router.refresh();
    });
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <TextInput
          label="External ID"
          description={
            tenant ? 'Fixed once the tenant exists' : 'Your own ID for this customer: letters, digits, _ . : -'
          }
          value={externalId}
          onChange={(event) => setExternalId(event.currentTarget.value)}
          disabled={tenant !== undefined}
          error={fieldMessage(error, 'external_id')}
          required
          data-autofocus={tenant ? undefined : true}
        />
        <TextInput
          label="Name"
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldMessage(error, 'name')}
          required
          data-autofocus={tenant ? true : undefined}
        />
        <MetadataEditor rows={rows} onChange={setRows} error={fieldMessage(error, 'metadata')} />
        <FormActions pending={pending} onCancel={onDone} confirmLabel={tenant ? 'Save' : 'Create tenant'} />
      </Stack>
    </form>
  );
}
