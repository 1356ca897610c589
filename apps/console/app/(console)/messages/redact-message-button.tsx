'use client';

import { useState } from 'react';
import { Alert, Button, Group, List, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { formatTimestamp } from '@/lib/format';
import { useIdempotentSubmit } from '@/lib/use-idempotent-submit';
import { FormActions } from '@/components/form-actions';
import { FormRefusal } from '@/components/form-refusal';
import { UnavailableButton } from '@/components/unavailable-button';
import { redactMessageAction } from './actions';
import type { Message, RedactMessageResult } from './message.types';

/** The confirmation, mounted per opening so each opening has its own idempotency key. */
function RedactMessageForm({ message, onClose, onRedacted }: RedactMessageButtonProps & { onClose: () => void }) {
  const [result, setResult] = useState<RedactMessageResult | null>(null);
  // The content card is read on the server: refresh reads it again to show that the content is gone.
  const { error, pending, submit } = useIdempotentSubmit(
    (redacted: RedactMessageResult) => {
      setResult(redacted);
      onRedacted();
    },
    { refresh: true },
  );

  const confirm = () => submit((key) => redactMessageAction(message.id, key));

  if (result)
    return (
      <Stack>
        <Alert color="green" title="Message redacted" data-testid="redact-result">
          <Text size="sm">
            Redaction status <b data-testid="redact-status">{result.status}</b> since{' '}
            {formatTimestamp(result.redactedAt)}. The content can no longer be read or replayed; the retention sweep
            completes the redaction once no database copy of the bytes is left.
          </Text>
        </Alert>
        <Group justify="flex-end">
          <Button onClick={onClose}>Close</Button>
        </Group>
      </Stack>
    );

  return (
    <Stack>
      <Text size="sm">
        Redact message <b>{message.id}</b>? This erases, at once and irreversibly:
      </Text>
      <List size="sm" spacing={4}>
        <List.Item>
          its body, and every transformed copy made for its endpoints: nobody can read or replay them again;
        </List.Item>
        <List.Item>
          and it cancels every pending delivery of the message, replays included (attempts in flight finish without
          retries).
        </List.Item>
      </List>
      <Text size="sm">
        The message&apos;s fields, metadata, delivery records and charges stay; nothing is refunded. This cannot be
        undone.
      </Text>
      <FormRefusal error={error} title="Not redacted" />
      <FormActions
        pending={pending}
        onCancel={onClose}
        cancelLabel="Keep the content"
        confirmLabel="Redact message"
        color="red"
        onConfirm={confirm}
      />
    </Stack>
  );
}

interface RedactMessageButtonProps {
  message: Message;
  /** Called once redacted, so the page reads the deliveries again at once. */
  onRedacted: () => void;
}

/** Erases the message's content for good after a confirmation that says exactly what goes and what stays. */
export function RedactMessageButton({ message, onRedacted }: RedactMessageButtonProps) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      {message.redacted ? (
        <UnavailableButton color="red" reason="This message is already redacted.">
          Redact message
        </UnavailableButton>
      ) : (
        <Button variant="light" color="red" onClick={open}>
          Redact message
        </Button>
      )}
      <Modal opened={opened} onClose={close} title="Redact message">
        <RedactMessageForm message={message} onRedacted={onRedacted} onClose={close} />
      </Modal>
    </>
  );
}
