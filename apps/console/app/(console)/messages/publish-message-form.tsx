'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Alert, Button, Group, Select, Stack, TextInput } from '@mantine/core';
import { fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { newRow, toRecord } from '@/lib/key-value-rows';
import { JsonEditor, jsonProblem } from '@/components/json-editor';
import { MetadataEditor } from '@/components/metadata-editor';
import { TenantSelect, type TenantChoices } from '@/components/tenant-select';
import { publishMessageAction } from './actions';
import type { EventTypeChoice } from './message.types';

const FIELDS = ['tenant_id', 'event_type', 'payload', 'external_id', 'metadata'] as const;

interface PublishMessageFormProps {
  tenants: TenantChoices;
  eventTypes: EventTypeChoice[];
}

/**
 * Publishes a message the way an integration does (POST /messages): it fans out to every matching endpoint of
 * the tenant and is charged. One idempotency key per opening of the page, so a resubmit after a lost answer
 * never publishes twice. On success the message's page opens and follows its deliveries.
 */
export function PublishMessageForm({ tenants, eventTypes }: PublishMessageFormProps) {
  const router = useRouter();
  const [tenantId, setTenantId] = useState<string | null>(null);
  const [eventType, setEventType] = useState<string | null>(null);
  const [payload, setPayload] = useState('{}');
  const [externalId, setExternalId] = useState('');
  const [rows, setRows] = useState(() => [newRow()]);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const payloadBlocked = payload.trim() === '' || jsonProblem(payload) !== null;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (tenantId === null) {
      setError({ code: 'invalid_field', message: 'Pick the tenant the message belongs to.', field: 'tenant_id' });
      return;
    }
    if (eventType === null) {
      setError({ code: 'invalid_field', message: 'Pick an event type.', field: 'event_type' });
      return;
    }
    if (payloadBlocked) {
      setError({ code: 'invalid_field', message: 'Enter the payload as JSON.', field: 'payload' });
      return;
    }
    const metadata = toRecord(rows);
    if (!metadata.ok) {
      setError({ code: 'invalid_field', message: metadata.message, field: 'metadata' });
      return;
    }
    startTransition(async () => {
      const result = await callAction(() =>
        publishMessageAction(
          { tenantId, eventType, payload, externalId: externalId.trim() || null, metadata: metadata.record },
          idempotency.key,
        ),
      );
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        return;
      }
      setError(null);
      router.push(`/messages/${encodeURIComponent(result.data.id)}`);
    });
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Publish a message">
      <Stack>
        <Group grow align="flex-start">
          <TenantSelect
            tenants={tenants}
            value={tenantId}
            onChange={setTenantId}
            error={fieldMessage(error, 'tenant_id')}
            required
          />
          <Select
            label="Event type"
            placeholder={eventTypes.length === 0 ? 'No event types yet' : 'Type a name'}
            description="Active types of your catalog"
            data={eventTypes.map((type) => ({ value: type.name, label: type.name }))}
            value={eventType}
            onChange={setEventType}
            searchable
            required
            nothingFoundMessage="No event type matches"
            maxDropdownHeight={280}
            limit={200}
            error={fieldMessage(error, 'event_type')}
            comboboxProps={{ withinPortal: true }}
          />
        </Group>
        <JsonEditor
          label="Payload"
          description="Any JSON, delivered exactly as typed with whitespace outside strings removed."
          value={payload}
          onChange={setPayload}
          serverError={fieldMessage(error, 'payload')}
        />
        <TextInput
          label="External ID"
          description="Optional: your own ID to find this message by (not deduplicated)"
          value={externalId}
          onChange={(event) => setExternalId(event.currentTarget.value)}
          error={fieldMessage(error, 'external_id')}
          maw={420}
        />
        <MetadataEditor rows={rows} onChange={setRows} error={fieldMessage(error, 'metadata')} />
        {error && isFormLevel(error, FIELDS) && (
          <Alert color="red" title="Not published" maw={720}>
            {error.message}
          </Alert>
        )}
        <Group>
          <Button type="submit" loading={pending} disabled={payloadBlocked}>
            Publish message
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
