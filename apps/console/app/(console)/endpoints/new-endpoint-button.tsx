'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { EndpointForm } from './endpoint-form';
import { SecretRevealModal } from './secret-reveal-modal';
import { useSecretReveal } from './use-secret-reveal';

export function NewEndpointButton({ tenantId }: { tenantId: string }) {
  const [opened, { open, close }] = useDisclosure(false);
  const reveal = useSecretReveal();
  return (
    <>
      <Button onClick={open}>New endpoint</Button>
      <Modal opened={opened} onClose={close} title="New endpoint" size="xl">
        <EndpointForm
          tenantId={tenantId}
          onDone={close}
          onCreated={(secret) => {
            close();
            reveal.reveal(secret);
          }}
        />
      </Modal>
      <SecretRevealModal reveal={reveal} />
    </>
  );
}
