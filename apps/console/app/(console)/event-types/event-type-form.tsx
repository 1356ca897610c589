'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { Stack, TextInput, Textarea } from '@mantine/core';
import { fieldMessage, isFormLevel, type ActionResult, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { createEventTypeAction, updateEventTypeAction } from './actions';
import { JsonEditor, jsonProblem } from '@/components/json-editor';
import { FormActions } from '@/components/form-actions';
import type { EventType } from './event-type.types';

const FIELDS = ['name', 'description', 'example'] as const;

interface EventTypeFormProps {
  /** The event type to edit; without one the form creates an event type. */
  eventType?: EventType;
  onDone: () => void;
}

export function EventTypeForm({ eventType, onDone }: EventTypeFormProps) {
  const router = useRouter();
  const [name, setName] = useState(eventType?.name ?? '');
  const [description, setDescription] = useState(eventType?.description ?? '');
  const [example, setExample] = useState(eventType?.example ?? '');
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const exampleInvalid = jsonProblem(example) !== null;

  const changeExample = (text: string) => {
    setExample(text);
    if (error?.field === 'example') setError(null);
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (exampleInvalid) return;
    // Blank means no example; anything else goes to the API exactly as typed.
    const changes = { description, example: example.trim() === '' ? null : example };
    startTransition(async () => {
      const result: ActionResult<EventType> = await callAction(() =>
        eventType
          ? updateEventTypeAction(eventType.id, eventType.etag, changes)
          : createEventTypeAction({ name, ...changes }, idempotency.key),
      );
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        if (isFormLevel(result.error, FIELDS)) notifyApiError(result.error);
        if (result.error.code === 'revision_conflict') router.refresh();
        return;
      }
      notifySuccess(eventType ? `Event type ${result.data.name} saved.` : `Event type ${result.data.name} created.`);
      onDone();
      router.refresh();
    });
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <TextInput
          label="Name"
          description={
            eventType ? 'Fixed once the event type exists' : 'Lowercase words separated by dots, such as invoice.paid'
          }
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          disabled={eventType !== undefined}
          error={fieldMessage(error, 'name')}
          required
          data-autofocus={eventType ? undefined : true}
        />
        <Textarea
          label="Description"
          value={description}
          onChange={(event) => setDescription(event.currentTarget.value)}
          error={fieldMessage(error, 'description')}
          autosize
          minRows={2}
          maxRows={6}
        />
        <JsonEditor
          label="Example"
          description="A sample payload in JSON. It is kept exactly as you type it."
          value={example}
          onChange={changeExample}
          serverError={fieldMessage(error, 'example')}
        />
        <FormActions
          pending={pending}
          onCancel={onDone}
          confirmLabel={eventType ? 'Save' : 'Create event type'}
          disabled={exampleInvalid}
        />
      </Stack>
    </form>
  );
}
