'use client';

import { useState, useTransition } from 'react';
import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ApiError } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { plural } from '@/lib/format';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { cancelReplayAction } from './actions';
import type { Replay } from './replay.types';

interface CancelReplayButtonProps {
  replay: Replay;
  /** Called with the canceled replay, so the page shows it at once. */
  onCanceled: () => void;
}

/** The confirmation, mounted per opening so each opening has its own idempotency key. */
function CancelReplayForm({ replay, onCanceled, onClose }: CancelReplayButtonProps & { onClose: () => void }) {
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, startTransition] = useTransition();
  const idempotency = useIdempotencyKey();

  const confirm = () =>
    startTransition(async () => {
      const answer = await callAction(() => cancelReplayAction(replay.id, idempotency.key));
      idempotency.settle(answer);
      if (!answer.ok) {
        setError(answer.error);
        return;
      }
      onCanceled();
      onClose();
    });

  return (
    <Stack>
      <Text size="sm">
        Cancel replay <b>{replay.id}</b>? It creates no more deliveries. The{' '}
        {plural(replay.counts.created, 'delivery', 'deliveries')} already created still run, and what was charged (
        {replay.costUsd} USD so far) is not refunded.
      </Text>
      {error && (
        <Alert color="red" title="Not canceled">
          {knownProblem(error)?.explanation ?? error.message}
        </Alert>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose} disabled={pending}>
          Keep it running
        </Button>
        <Button color="red" onClick={confirm} loading={pending}>
          Cancel replay
        </Button>
      </Group>
    </Stack>
  );
}

/** Stops a running replay from creating more deliveries, after a confirmation that says what happens. */
export function CancelReplayButton({ replay, onCanceled }: CancelReplayButtonProps) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button variant="light" color="red" onClick={open}>
        Cancel replay
      </Button>
      <Modal opened={opened} onClose={close} title="Cancel replay">
        <CancelReplayForm replay={replay} onCanceled={onCanceled} onClose={close} />
      </Modal>
    </>
  );
}
