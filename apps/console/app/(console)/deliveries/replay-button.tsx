'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { Delivery } from './delivery.types';
import { ReplayForm } from './replay-form';

/** Replays one finished delivery after showing its price; `onReplayed` lets the page show the new generation. */
export function ReplayButton({ delivery, onReplayed }: { delivery: Delivery; onReplayed: () => void }) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button size="xs" variant="light" onClick={open} aria-label={`Replay ${delivery.id}`}>
        Replay
      </Button>
      <Modal opened={opened} onClose={close} title={`Replay delivery ${delivery.id}`} size="lg">
        <ReplayForm deliveryIds={[delivery.id]} onClose={close} onReplayed={onReplayed} />
      </Modal>
    </>
  );
}
