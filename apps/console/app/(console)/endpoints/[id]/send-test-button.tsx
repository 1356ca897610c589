'use client';

import { Button, Modal, Tooltip } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
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
        <Tooltip label={refused}>
          <Button variant="light" data-disabled onClick={(event) => event.preventDefault()}>
            Send test message
          </Button>
        </Tooltip>
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
