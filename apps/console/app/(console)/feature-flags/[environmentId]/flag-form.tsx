'use client';

import { useState, useTransition } from 'react';
import { Stack, Switch, TextInput, Textarea } from '@mantine/core';
import { fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError } from '@/lib/notify';
import { JsonEditor, jsonProblem } from '@/components/json-editor';
import { FormActions } from '@/components/form-actions';
import { putFlagAction } from '../actions';
import { FLAG_KEY_PATTERN, type Flag } from '../flag.types';

interface FlagFormProps {
  environmentId: string;
  /** The flag to edit (its key is fixed), or null to create one. */
  flag: Flag | null;
  onDone: (saved: Flag | null) => void;
}

/** Creates a flag or replaces an existing one (PUT: the whole flag; a blank value is null). */
export function FlagForm({ environmentId, flag, onDone }: FlagFormProps) {
  const [key, setKey] = useState(flag?.key ?? '');
  const [enabled, setEnabled] = useState(flag?.enabled ?? false);
  const [description, setDescription] = useState(flag?.description ?? '');
  const [value, setValue] = useState(flag && flag.value !== 'null' ? flag.value : '');
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const keyProblem = key !== '' && !FLAG_KEY_PATTERN.test(key) ? '1 to 128 letters, digits, _, . or -' : undefined;

  const submit = () =>
    startTransition(async () => {
      const result = await callAction(() =>
        putFlagAction(environmentId, { key, enabled, description, value, etag: flag?.etag ?? null }, idempotency.key),
      );
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (isFormLevel(result.error, ['flag_key', 'enabled', 'description', 'value'])) notifyApiError(result.error);
        return;
      }
      onDone(result.data);
    });

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <Stack>
        <TextInput
          label="Key"
          description="1 to 128 letters, digits, _, . or -"
          value={key}
          onChange={(event) => setKey(event.currentTarget.value)}
          disabled={flag !== null}
          error={keyProblem ?? fieldMessage(error, 'flag_key')}
          required
        />
        <Switch label="Enabled" checked={enabled} onChange={(event) => setEnabled(event.currentTarget.checked)} />
        <Textarea
          label="Description"
          value={description}
          onChange={(event) => setDescription(event.currentTarget.value)}
          error={fieldMessage(error, 'description')}
          autosize
          minRows={2}
        />
        <JsonEditor
          label="Value"
          description="Any JSON, served when the flag is enabled (blank: null). Kept exactly as written."
          value={value}
          onChange={setValue}
          serverError={fieldMessage(error, 'value')}
          placeholder='{"rollout": 10}'
          minRows={3}
        />
        <FormActions
          pending={pending}
          onCancel={() => onDone(null)}
          confirmLabel={flag ? 'Save flag' : 'Create flag'}
          disabled={key === '' || Boolean(keyProblem) || jsonProblem(value) !== null}
        />
      </Stack>
    </form>
  );
}
