'use client';

import { useState, useTransition } from 'react';
import { MultiSelect, Select, Stack, TextInput, Textarea } from '@mantine/core';
import { fieldMessage, isFormLevel, type ApiError, type ActionResult } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError } from '@/lib/notify';
import { FormActions } from '@/components/form-actions';
import { FORMAT_LABELS, type Subscription, type SubscriptionInput } from './subscription.types';

export interface EnvironmentChoice {
  id: string;
  name: string;
}

interface SubscriptionFormProps {
  environments: EnvironmentChoice[];
  events: string[];
  /** The subscription to edit, or null for a new one. */
  subscription: Subscription | null;
  submit: (input: SubscriptionInput, idempotencyKey: string) => Promise<ActionResult<unknown>>;
  onCancel: () => void;
  submitLabel: string;
}

const FIELDS = ['url', 'events', 'environment_ids', 'description', 'format'];

/** URL, format, events and environments of a subscription. */
export function SubscriptionForm({
  environments,
  events,
  subscription,
  submit,
  onCancel,
  submitLabel,
}: SubscriptionFormProps) {
  const [url, setUrl] = useState(subscription?.url ?? '');
  const [format, setFormat] = useState(subscription?.format ?? 'svc');
  const [picked, setPicked] = useState<string[]>(subscription?.events ?? ['feature_flags.*']);
  const [environmentIds, setEnvironmentIds] = useState<string[]>(subscription?.environmentIds ?? []);
  const [description, setDescription] = useState(subscription?.description ?? '');
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const send = () =>
    startTransition(async () => {
      const result = await callAction(() =>
        submit({ url: url.trim(), format, events: picked, environmentIds, description }, idempotency.key),
      );
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (isFormLevel(result.error, FIELDS)) notifyApiError(result.error);
      }
    });

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <Stack>
        <TextInput
          label="URL"
          description="The HTTPS receiver, or a Slack, Teams or Discord incoming webhook URL"
          value={url}
          onChange={(event) => setUrl(event.currentTarget.value)}
          error={fieldMessage(error, 'url')}
          required
        />
        <Select
          label="Format"
          data={Object.entries(FORMAT_LABELS).map(([value, label]) => ({ value, label }))}
          value={format}
          onChange={(value) => setFormat(value ?? 'svc')}
          error={fieldMessage(error, 'format')}
          allowDeselect={false}
        />
        <MultiSelect
          label="Events"
          data={events}
          value={picked}
          onChange={setPicked}
          error={fieldMessage(error, 'events')}
        />
        <MultiSelect
          label="Environments"
          data={environments.map((environment) => ({ value: environment.id, label: environment.name }))}
          value={environmentIds}
          onChange={setEnvironmentIds}
          error={fieldMessage(error, 'environment_ids')}
          searchable
          required
        />
        <Textarea
          label="Description"
          value={description}
          onChange={(event) => setDescription(event.currentTarget.value)}
          error={fieldMessage(error, 'description')}
          autosize
          minRows={2}
        />
        <FormActions
          pending={pending}
          onCancel={onCancel}
          confirmLabel={submitLabel}
          disabled={url.trim() === '' || environmentIds.length === 0}
        />
      </Stack>
    </form>
  );
}
