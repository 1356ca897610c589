'use client';

import { useState, useTransition } from 'react';
import { Alert, Button, Group, List, Modal, Stack, Text, Tooltip } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ApiError } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { cancelMessageAction } from './actions';
import { pendingOriginals, type CancelMessageResult, type Message } from './message.types';

function CancelResult({ result }: { result: CancelMessageResult }) {
  return (
    <Alert color="green" title="Message canceled" data-testid="cancel-result">
      <List size="sm" spacing={4}>
        <List.Item>Canceled now: {result.canceledCount}</List.Item>
        <List.Item>In flight (the attempt finishes, no retries follow): {result.inFlightCount}</List.Item>
        <List.Item>Already finished, left as they were: {result.alreadyTerminalCount}</List.Item>
      </List>
    </Alert>
  );
}

/** The confirmation, mounted per opening so each opening has its own idempotency key. */
function CancelMessageForm({ message, onClose, onCanceled }: CancelMessageButtonProps & { onClose: () => void }) {
  const [result, setResult] = useState<CancelMessageResult | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();
  const { scheduled, queued, retryWait, inFlight } = message.deliveryCounts;
  const waiting = scheduled + queued + retryWait;

  const confirm = () =>
    startTransition(async () => {
      const answer = await callAction(() => cancelMessageAction(message.id, idempotency.key));
      idempotency.settle(answer);
      if (!answer.ok) {
        setError(answer.error);
        return;
      }
      setError(null);
      setResult(answer.data);
      onCanceled();
    });

  if (result)
    return (
      <Stack>
        <CancelResult result={result} />
        <Group justify="flex-end">
          <Button onClick={onClose}>Close</Button>
        </Group>
      </Stack>
    );

  return (
    <Stack>
      <Text size="sm">
        Cancel message <b>{message.id}</b>? Its original deliveries not sent yet ({waiting}: scheduled, queued or
        waiting for a retry) are canceled now and never sent. An attempt already in flight ({inFlight}) finishes, but no
        retry follows it. Replays are not touched.
      </Text>
      <Text size="sm">Nothing is refunded: the message and its deliveries stay charged. This cannot be undone.</Text>
      {error && (
        <Alert color="red" title="Not canceled">
          {error.message}
        </Alert>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose} disabled={pending}>
          Keep the message
        </Button>
        <Button color="red" onClick={confirm} loading={pending}>
          Cancel message
        </Button>
      </Group>
    </Stack>
  );
}

interface CancelMessageButtonProps {
  message: Message;
  /** Called once canceled, so the page reads the deliveries again at once. */
  onCanceled: () => void;
}

/** Cancels the message's pending original deliveries after a confirmation that says what happens. */
export function CancelMessageButton({ message, onCanceled }: CancelMessageButtonProps) {
  const [opened, { open, close }] = useDisclosure(false);
  const nothingPending = pendingOriginals(message.deliveryCounts) === 0;
  return (
    <>
      {nothingPending ? (
        <Tooltip label="Every original delivery has finished: there is nothing to cancel.">
          <Button variant="light" color="red" data-disabled onClick={(event) => event.preventDefault()}>
            Cancel message
          </Button>
        </Tooltip>
      ) : (
        <Button variant="light" color="red" onClick={open}>
          Cancel message
        </Button>
      )}
      <Modal opened={opened} onClose={close} title="Cancel message">
        <CancelMessageForm message={message} onCanceled={onCanceled} onClose={close} />
      </Modal>
    </>
  );
}
