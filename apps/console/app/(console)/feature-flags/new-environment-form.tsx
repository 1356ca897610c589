'use client';

import { useState, useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Group, TextInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { createEnvironmentAction } from './actions';

/** Creates an environment by name (unique per team, whatever its case). */
export function NewEnvironmentForm() {
  const router = useRouter();
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const submit = () =>
    startTransition(async () => {
      const result = await callAction(() => createEnvironmentAction(name.trim(), idempotency.key));
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (result.error.field !== 'name') notifyApiError(result.error);
        return;
      }
      setError(null);
      setName('');
      notifySuccess(`Environment ${result.data.name} created.`);
      router.refresh();
    });

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <Group align="flex-end">
        <TextInput
          label="New environment"
          placeholder="production"
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          error={fieldMessage(error, 'name')}
          maxLength={128}
        />
        <Button type="submit" loading={pending} disabled={name.trim() === ''}>
          Create environment
        </Button>
      </Group>
    </form>
  );
}
