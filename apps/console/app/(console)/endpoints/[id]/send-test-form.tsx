'use client';

import { useState, useTransition, type FormEvent } from 'react';
import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { fieldMessage, isFormLevel, type ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { JsonEditor, jsonProblem } from '@/components/json-editor';
import { FormActions } from '@/components/form-actions';
import { sendTestMessageAction } from '../../messages/actions';
import { DEFAULT_TEST_PAYLOAD, type Message } from '../../messages/message.types';
import type { Endpoint } from '../endpoint.types';
import { TestMessageResult } from './test-message-result';

/**
 * A test message (event type svc.test) to this endpoint only: its event types, filter and transform are skipped,
 * its authentication, signing and retries are used, and it is charged (ingestion plus one delivery). The form
 * mounts when the modal opens, so each opening has its own idempotency key.
 */
export function SendTestForm({ endpoint, onClose }: { endpoint: Endpoint; onClose: () => void }) {
  const [payload, setPayload] = useState(DEFAULT_TEST_PAYLOAD);
  const [sent, setSent] = useState<Message | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const blocked = payload.trim() === '' || jsonProblem(payload) !== null;

  const send = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (blocked) return;
    startTransition(async () => {
      const result = await callAction(() => sendTestMessageAction(endpoint.id, payload, idempotency.key));
      idempotency.settle(result);
      if (!result.ok) {
        setError(result.error);
        return;
      }
      setError(null);
      setSent(result.data);
    });
  };

  if (sent)
    return (
      <Stack>
        <TestMessageResult initial={sent} />
        <Group justify="flex-end">
          <Button variant="default" onClick={() => setSent(null)}>
            Send another
          </Button>
          <Button onClick={onClose}>Close</Button>
        </Group>
      </Stack>
    );

  return (
    <form onSubmit={send} noValidate aria-label="Send a test message">
      <Stack>
        <Text size="sm">
          Sends event type <b>svc.test</b> to this endpoint only, signed and with its authorization, whatever its event
          types, filter and transform. It is charged like any message: ingestion plus one delivery.
        </Text>
        <JsonEditor
          label="Test payload"
          description="JSON, delivered exactly as typed with whitespace outside strings removed."
          value={payload}
          onChange={setPayload}
          serverError={fieldMessage(error, 'payload')}
          minRows={3}
        />
        {error && isFormLevel(error, ['payload']) && (
          <Alert color="red" title="Not sent">
            {error.message}
          </Alert>
        )}
        <FormActions pending={pending} onCancel={onClose} confirmLabel="Send test message" disabled={blocked} />
      </Stack>
    </form>
  );
}
