'use client';

import { useState, useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { Alert, Button, Group, List, Modal, Stack, Text, Tooltip } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ApiError } from '@/lib/api-error';
import { formatTimestamp } from '@/lib/format';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { redactMessageAction } from './actions';
import type { Message, RedactMessageResult } from './message.types';

/** The confirmation, mounted per opening so each opening has its own idempotency key. */
function RedactMessageForm({ message, onClose, onRedacted }: RedactMessageButtonProps & { onClose: () => void }) {
  const router = useRouter();
  const [result, setResult] = useState<RedactMessageResult | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const confirm = () =>
    startTransition(async () => {
      const answer = await callAction(() => redactMessageAction(message.id, idempotency.key));
      idempotency.settle(answer);
      if (!answer.ok) {
        setError(answer.error);
        return;
      }
      setError(null);
      setResult(answer.data);
      onRedacted();
      // The content card is read on the server: read it again to show that the content is gone.
      router.refresh();
    });

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
      {error && (
        <Alert color="red" title="Not redacted">
          {error.message}
        </Alert>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose} disabled={pending}>
          Keep the content
        </Button>
        <Button color="red" onClick={confirm} loading={pending}>
          Redact message
        </Button>
      </Group>
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
        <Tooltip label="This message is already redacted.">
          <Button variant="light" color="red" data-disabled onClick={(event) => event.preventDefault()}>
            Redact message
          </Button>
        </Tooltip>
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
