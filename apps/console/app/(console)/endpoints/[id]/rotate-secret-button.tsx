'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { notifySuccess } from '@/lib/notify';
import { SecretRevealModal } from '../secret-reveal-modal';
import { useSecretReveal } from '@/lib/use-secret-reveal';
import { RotateSecretForm } from './rotate-secret-form';
import type { Endpoint } from '../endpoint.types';

export function RotateSecretButton({ endpoint }: { endpoint: Endpoint }) {
  const [opened, { open, close }] = useDisclosure(false);
  const reveal = useSecretReveal();
  return (
    <>
      <Button variant="light" color="orange" onClick={open}>
        Rotate secret
      </Button>
      <Modal opened={opened} onClose={close} title="Rotate signing secret">
        <RotateSecretForm
          endpoint={endpoint}
          onCancel={close}
          onRotated={(secret) => {
            close();
            if (secret === null)
              notifySuccess('Rotated: receivers verify with the new public key shown under Signing.');
            else reveal.reveal(secret);
          }}
        />
      </Modal>
      <SecretRevealModal reveal={reveal} />
    </>
  );
}
