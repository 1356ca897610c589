'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { UnavailableButton } from '@/components/unavailable-button';
import type { Endpoint } from '../endpoint.types';
import { SendTestForm } from './send-test-form';

/** Opens the test message form; paused and disabled endpoints refuse tests, so the button says why it is off. */
export function SendTestButton({ endpoint }: { endpoint: Endpoint }) {
  const [opened, { open, close }] = useDisclosure(false);
  const refused =
    endpoint.status === 'paused'
      ? 'A paused endpoint refuses test messages: enable it first.'
      : endpoint.status === 'disabled'
        ? 'A disabled endpoint refuses test messages: resume it first.'
        : null;
  return (
    <>
      {refused ? (
        <UnavailableButton reason={refused}>Send test message</UnavailableButton>
      ) : (
        <Button variant="light" onClick={open}>
          Send test message
        </Button>
      )}
      <Modal opened={opened} onClose={close} title={`Send a test message to ${endpoint.name}`} size="xl">
        <SendTestForm endpoint={endpoint} onClose={close} />
      </Modal>
    </>
  );
}
