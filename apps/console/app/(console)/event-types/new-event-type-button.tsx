'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { EventTypeForm } from './event-type-form';

export function NewEventTypeButton() {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button onClick={open}>New event type</Button>
      <Modal opened={opened} onClose={close} title="New event type" size="xl">
        <EventTypeForm onDone={close} />
      </Modal>
    </>
  );
}
