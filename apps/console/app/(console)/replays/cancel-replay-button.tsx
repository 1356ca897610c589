'use client';

import { Button, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { knownProblem } from '@/lib/api-problem';
import { plural } from '@/lib/format';
import { useIdempotentSubmit } from '@/lib/use-idempotent-submit';
import { FormActions } from '@/components/form-actions';
import { FormRefusal } from '@/components/form-refusal';
import { cancelReplayAction } from './actions';
import type { Replay } from './replay.types';

interface CancelReplayButtonProps {
  replay: Replay;
  /** Called with the canceled replay, so the page shows it at once. */
  onCanceled: () => void;
}

/** The confirmation, mounted per opening so each opening has its own idempotency key. */
function CancelReplayForm({ replay, onCanceled, onClose }: CancelReplayButtonProps & { onClose: () => void }) {
  const { error, pending, submit } = useIdempotentSubmit(() => {
    onCanceled();
    onClose();
  });

  const confirm = () => submit((key) => cancelReplayAction(replay.id, key));

  return (
    <Stack>
      <Text size="sm">
        Cancel replay <b>{replay.id}</b>? It creates no more deliveries. The{' '}
        {plural(replay.counts.created, 'delivery', 'deliveries')} already created still run, and what was charged (
        {replay.costUsd} USD so far) is not refunded.
      </Text>
      <FormRefusal error={error} title="Not canceled" message={error ? knownProblem(error)?.explanation : undefined} />
      <FormActions
        pending={pending}
        onCancel={onClose}
        cancelLabel="Keep it running"
        confirmLabel="Cancel replay"
        color="red"
        onConfirm={confirm}
      />
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
