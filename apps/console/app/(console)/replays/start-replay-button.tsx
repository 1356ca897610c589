'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { UnavailableButton } from '@/components/unavailable-button';
import { StartReplayForm, type ReplayInputs } from './start-replay-form';

interface StartReplayButtonProps {
  /** The endpoint whose dead letters are replayed; null when none is picked (the button says what to do). */
  endpointId: string | null;
  endpointName: string | null;
  /** What the dialog starts with (the dead letters' filters); empty by default, the API's last 30 days. */
  initial?: ReplayInputs;
  /** Why there is no endpoint, shown on the disabled button. */
  disabledHint?: string;
}

const NO_FILTERS: ReplayInputs = { createdAfter: '', createdBefore: '', eventType: '' };

/** "Replay dead letters": a dialog that shows the estimate first and starts the bulk replay on confirm. */
export function StartReplayButton({
  endpointId,
  endpointName,
  initial = NO_FILTERS,
  disabledHint,
}: StartReplayButtonProps) {
  const [opened, { open, close }] = useDisclosure(false);
  if (endpointId === null)
    return (
      <UnavailableButton reason={disabledHint ?? 'Pick an endpoint first.'}>Replay dead letters</UnavailableButton>
    );
  return (
    <>
      <Button variant="light" onClick={open}>
        Replay dead letters
      </Button>
      <Modal opened={opened} onClose={close} title={`Replay dead letters of ${endpointName ?? endpointId}`} size="lg">
        <StartReplayForm endpointId={endpointId} initial={initial} onClose={close} />
      </Modal>
    </>
  );
}
