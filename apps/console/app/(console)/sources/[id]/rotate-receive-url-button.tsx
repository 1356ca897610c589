'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { notifySuccess } from '@/lib/notify';
import { useSecretReveal } from '@/lib/use-secret-reveal';
import { SourceRevealModal, type SourceShownOnce } from '../source-reveal-modal';
import type { Source } from '../source.types';
import { RotateReceiveUrlForm } from './rotate-receive-url-form';

export function RotateReceiveUrlButton({ source }: { source: Source }) {
  const [opened, { open, close }] = useDisclosure(false);
  const reveal = useSecretReveal<SourceShownOnce>();
  return (
    <>
      <Button variant="light" color="orange" onClick={open}>
        Rotate receive URL
      </Button>
      <Modal opened={opened} onClose={close} title="Rotate receive URL">
        <RotateReceiveUrlForm
          source={source}
          onCancel={close}
          onRotated={(rotated) => {
            close();
            // An idempotent replay by another key shows no URL; the rotation itself happened.
            if (rotated.receiveUrl === null) return notifySuccess('Receive URL rotated.');
            reveal.reveal({
              occasion: 'token',
              receiveUrl: rotated.receiveUrl,
              secret: null,
              previousEndsAt: rotated.source.tokenRotationEndsAt,
            });
          }}
        />
      </Modal>
      <SourceRevealModal reveal={reveal} />
    </>
  );
}
