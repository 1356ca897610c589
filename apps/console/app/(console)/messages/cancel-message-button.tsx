'use client';

import { useState } from 'react';
import { Alert, Button, Group, List, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useIdempotentSubmit } from '@/lib/use-idempotent-submit';
import { FormActions } from '@/components/form-actions';
import { FormRefusal } from '@/components/form-refusal';
import { UnavailableButton } from '@/components/unavailable-button';
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
  const { error, pending, submit } = useIdempotentSubmit((canceled: CancelMessageResult) => {
    setResult(canceled);
    onCanceled();
  });
  const { scheduled, queued, retryWait, inFlight } = message.deliveryCounts;
  const waiting = scheduled + queued + retryWait;

  const confirm = () => submit((key) => cancelMessageAction(message.id, key));

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
      <FormRefusal error={error} title="Not canceled" />
      <FormActions
        pending={pending}
        onCancel={onClose}
        cancelLabel="Keep the message"
        confirmLabel="Cancel message"
        color="red"
        onConfirm={confirm}
      />
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
        <UnavailableButton color="red" reason="Every original delivery has finished: there is nothing to cancel.">
          Cancel message
        </UnavailableButton>
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
