'use client';

import { useMemo, useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Divider, Stack, TextInput } from '@mantine/core';
import { concernsField, fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { callAction } from '@/lib/idempotency-key';
import { toRecord, toRows } from '@/lib/key-value-rows';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { MetadataEditor } from '@/components/metadata-editor';
import { FormActions } from '@/components/form-actions';
import type { EventTypeChoice } from '../../messages/message.types';
import { updateSourceAction } from '../actions';
import { initialMapping, MAPPING_FIELDS, MappingFields, toMapping, type MappingValues } from '../mapping-fields';
import { SettingsFields } from '../settings-fields';
import type { Source, VerifierKind } from '../source.types';
import { initialSettingValues, settingFields, toSettings, type SettingValues } from '../verifier-settings';

interface EditSourceFormProps {
  source: Source;
  /** The source's kind as verifierKinds describes it; null when the API no longer lists it (settings stay). */
  kind: VerifierKind | null;
  eventTypes: EventTypeChoice[];
  onDone: () => void;
}

function invalid(field: string, message: string): ApiError {
  return { code: 'invalid_field', message, field };
}

/** Name, the kind's settings, the event type mapping, the billing key and metadata; the kind and secret stay. */
export function EditSourceForm({ source, kind, eventTypes, onDone }: EditSourceFormProps) {
  const router = useRouter();
  const fields = useMemo(() => (kind ? settingFields(kind.settings) : []), [kind]);
  const [name, setName] = useState(source.name);
  const [settings, setSettings] = useState<SettingValues>(() => initialSettingValues(fields, source.verification));
  const [mapping, setMapping] = useState<MappingValues>(() => initialMapping(source));
  const [billingKeyId, setBillingKeyId] = useState(source.billingKeyId);
  const [metadataRows, setMetadataRows] = useState(() => toRows(source.metadata));
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const shownFields = [
    'name',
    ...fields.map((field) => `verification.${field.name}`),
    ...MAPPING_FIELDS,
    'billing_key_id',
    'metadata',
  ];
  const touched = (field: string) => {
    if (concernsField(error, field)) setError(null);
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const read = toSettings(fields, settings);
    if (!read.ok) return setError(read.error);
    const mapped = toMapping(mapping);
    if (!mapped.ok) return setError(mapped.error);
    const metadata = toRecord(metadataRows);
    if (!metadata.ok) return setError(invalid('metadata', metadata.message));
    if (billingKeyId.trim() === '')
      return setError(invalid('billing_key_id', 'Enter the key captures are charged to.'));
    startTransition(async () => {
      const result = await callAction(() =>
        updateSourceAction(source.id, source.etag, {
          name,
          ...mapped.mapping,
          // The API takes the settings in full; a kind without settings has nothing to send.
          ...(fields.length > 0 ? { verification: read.settings } : {}),
          billingKeyId: billingKeyId.trim(),
          metadata: metadata.record,
        }),
      );
      if (!result.ok) {
        setError(result.error);
        if (isFormLevel(result.error, shownFields)) notifyApiError(result.error);
        if (result.error.code === 'revision_conflict') router.refresh();
        return;
      }
      notifySuccess(`Source ${result.data.name} saved.`);
      onDone();
      router.refresh();
    });
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Edit source">
      <Stack>
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
        {fields.length > 0 && (
          <>
            <Divider label={`Verification (${source.kind})`} labelPosition="left" />
            <SettingsFields
              fields={fields}
              values={settings}
              onChange={(setting, value) => {
                setSettings((current) => ({ ...current, [setting]: value }));
                touched(`verification.${setting}`);
              }}
              error={error}
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
          description="The secret key captures are charged to."
          value={billingKeyId}
          onChange={(event) => {
            setBillingKeyId(event.currentTarget.value);
            touched('billing_key_id');
          }}
          error={fieldMessage(error, 'billing_key_id')}
          spellCheck={false}
          required
          maw={420}
        />
        <MetadataEditor rows={metadataRows} onChange={setMetadataRows} error={fieldMessage(error, 'metadata')} />
        <FormActions pending={pending} onCancel={onDone} confirmLabel="Save" />
      </Stack>
    </form>
  );
}
