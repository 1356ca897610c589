'use client';

import { useEffect, useMemo, useRef, useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Divider, PasswordInput, Select, Stack, TextInput } from '@mantine/core';
import { concernsField, fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { newRow, toRecord } from '@/lib/key-value-rows';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { MetadataEditor } from '@/components/metadata-editor';
import { TenantSelect, type TenantChoices } from '@/components/tenant-select';
import { FormActions } from '@/components/form-actions';
import type { EventTypeChoice } from '../messages/message.types';
import { createSourceAction } from './actions';
import { initialMapping, MAPPING_FIELDS, MappingFields, toMapping, type MappingValues } from './mapping-fields';
import { SettingsFields } from './settings-fields';
import { KIND_HINTS, type SourceReveal, type VerifierKind } from './source.types';
import { initialSettingValues, settingFields, toSettings, type SettingValues } from './verifier-settings';

interface SourceFormProps {
  /** The tenant picked to start with, or null to pick one in the form. */
  tenantId: string | null;
  tenants: TenantChoices;
  kinds: VerifierKind[];
  eventTypes: EventTypeChoice[];
  onCreated: (created: SourceReveal) => void;
  onDone: () => void;
}

function invalid(field: string, message: string): ApiError {
  return { code: 'invalid_field', message, field };
}

/**
 * Creates a source: a verifier kind and exactly its settings, the secret when the provider issues it (optional
 * for kinds that generate theirs), the event type mapping and the billing key. The form mounts when its modal
 * opens, so each opening has its own idempotency key.
 */
export function SourceForm({
  tenantId: initialTenantId,
  tenants,
  kinds,
  eventTypes,
  onCreated,
  onDone,
}: SourceFormProps) {
  const router = useRouter();
  const idempotency = useIdempotencyKey();
  const [tenantId, setTenantId] = useState<string | null>(initialTenantId);
  const [name, setName] = useState('');
  const [kind, setKind] = useState<string | null>(null);
  const [settings, setSettings] = useState<SettingValues>({});
  const [secret, setSecret] = useState('');
  const [mapping, setMapping] = useState<MappingValues>(() => initialMapping());
  const [billingKeyId, setBillingKeyId] = useState('');
  const [metadataRows, setMetadataRows] = useState(() => [newRow()]);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const formRef = useRef<HTMLFormElement>(null);

  const picked = kinds.find((candidate) => candidate.kind === kind) ?? null;
  const fields = useMemo(() => (picked ? settingFields(picked.settings) : []), [picked]);
  const shownFields = [
    'tenant_id',
    'name',
    'verification.kind',
    'verification.secret',
    ...fields.map((field) => `verification.${field.name}`),
    ...MAPPING_FIELDS,
    'billing_key_id',
    'metadata',
  ];
  /** Clears an error about a field the operator is now changing. */
  const touched = (field: string) => {
    if (concernsField(error, field)) setError(null);
  };

  // The form is taller than its modal: bring the field an error is about into view.
  useEffect(() => {
    if (error) formRef.current?.querySelector('.mantine-InputWrapper-error')?.scrollIntoView({ block: 'center' });
  }, [error]);

  const pickKind = (next: string | null) => {
    setKind(next);
    const nextKind = kinds.find((candidate) => candidate.kind === next);
    setSettings(nextKind ? initialSettingValues(settingFields(nextKind.settings)) : {});
    if (concernsField(error, 'verification')) setError(null);
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (tenantId === null) return setError(invalid('tenant_id', 'Pick the tenant whose messages the captures become.'));
    if (picked === null) return setError(invalid('verification.kind', 'Pick how requests are verified.'));
    if (!picked.generatesSecret && secret === '')
      return setError(invalid('verification.secret', 'Enter the secret the provider issued.'));
    const read = toSettings(fields, settings);
    if (!read.ok) return setError(read.error);
    const mapped = toMapping(mapping);
    if (!mapped.ok) return setError(mapped.error);
    const metadata = toRecord(metadataRows);
    if (!metadata.ok) return setError(invalid('metadata', metadata.message));
    const verification = { kind: picked.kind, ...read.settings, ...(secret === '' ? {} : { secret }) };
    startTransition(async () => {
      const result = await callAction(() =>
        createSourceAction(
          {
            tenantId,
            name,
            verification,
            ...mapped.mapping,
            ...(billingKeyId.trim() === '' ? {} : { billingKeyId: billingKeyId.trim() }),
            metadata: metadata.record,
          },
          idempotency.key,
        ),
      );
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (isFormLevel(result.error, shownFields)) notifyApiError(result.error);
        return;
      }
      notifySuccess(`Source ${result.data.source.name} created.`);
      onCreated(result.data);
      router.refresh();
    });
  };

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label="New source">
      <Stack>
        <TenantSelect
          tenants={tenants}
          value={tenantId}
          onChange={(next) => {
            setTenantId(next);
            touched('tenant_id');
          }}
          description="Captures become this tenant's messages and go to its endpoints"
          error={fieldMessage(error, 'tenant_id')}
          required
        />
        <TextInput
          label="Name"
          value={name}
          onChange={(event) => {
            setName(event.currentTarget.value);
            touched('name');
          }}
          error={fieldMessage(error, 'name')}
          required
          data-autofocus
        />
        <Divider label="Verification" labelPosition="left" />
        <Select
          label="Verifier kind"
          description={kind ? (KIND_HINTS[kind] ?? kind) : 'How requests to the receive URL are verified'}
          placeholder="Pick a kind"
          data={kinds.map((candidate) => candidate.kind)}
          value={kind}
          onChange={pickKind}
          error={fieldMessage(error, 'verification.kind')}
          required
          allowDeselect={false}
          comboboxProps={{ withinPortal: true }}
          maw={420}
        />
        {picked && (
          <>
            <SettingsFields
              fields={fields}
              values={settings}
              onChange={(setting, value) => {
                setSettings((current) => ({ ...current, [setting]: value }));
                touched(`verification.${setting}`);
              }}
              error={error}
            />
            <PasswordInput
              label="Secret"
              description={
                picked.generatesSecret
                  ? 'Optional: leave it empty and a secret is generated and shown once. Write-only.'
                  : 'The secret the provider issued for this webhook, exactly as issued. Write-only: it cannot be read back.'
              }
              value={secret}
              onChange={(event) => {
                setSecret(event.currentTarget.value);
                touched('verification.secret');
              }}
              error={fieldMessage(error, 'verification.secret')}
              required={!picked.generatesSecret}
              autoComplete="off"
            />
          </>
        )}
        <Divider label="Captures" labelPosition="left" />
        <MappingFields
          values={mapping}
          onChange={(patch) => {
            setMapping((current) => ({ ...current, ...patch }));
            MAPPING_FIELDS.forEach(touched);
          }}
          eventTypes={eventTypes}
          error={error}
        />
        <TextInput
          label="Billing key ID"
          description="The secret key captures are charged to. Blank: the key you signed in with."
          placeholder="key_..."
          value={billingKeyId}
          onChange={(event) => {
            setBillingKeyId(event.currentTarget.value);
            touched('billing_key_id');
          }}
          error={fieldMessage(error, 'billing_key_id')}
          spellCheck={false}
          maw={420}
        />
        <MetadataEditor rows={metadataRows} onChange={setMetadataRows} error={fieldMessage(error, 'metadata')} />
        <FormActions pending={pending} onCancel={onDone} confirmLabel="Create source" />
      </Stack>
    </form>
  );
}
