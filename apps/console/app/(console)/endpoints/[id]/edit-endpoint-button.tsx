'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { EndpointForm } from '../endpoint-form';
import type { Endpoint } from '../endpoint.types';

export function EditEndpointButton({ endpoint }: { endpoint: Endpoint }) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button variant="light" onClick={open}>
        Edit
      </Button>
      <Modal opened={opened} onClose={close} title={`Edit endpoint ${endpoint.name}`} size="xl">
        {/* Remount on a new version so the form starts from what the API stored. */}
        <EndpointForm key={endpoint.etag} endpoint={endpoint} onDone={close} />
      </Modal>
    </>
  );
}
