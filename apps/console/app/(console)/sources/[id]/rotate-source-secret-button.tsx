'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { formatTimestamp } from '@/lib/format';
import { notifySuccess } from '@/lib/notify';
import { useSecretReveal } from '@/lib/use-secret-reveal';
import { SourceRevealModal, type SourceShownOnce } from '../source-reveal-modal';
import type { Source } from '../source.types';
import { RotateSourceSecretForm } from './rotate-source-secret-form';

export function RotateSourceSecretButton({ source, generatesSecret }: { source: Source; generatesSecret: boolean }) {
  const [opened, { open, close }] = useDisclosure(false);
  const reveal = useSecretReveal<SourceShownOnce>();
  return (
    <>
      <Button variant="light" color="orange" onClick={open}>
        Rotate secret
      </Button>
      <Modal opened={opened} onClose={close} title="Rotate secret">
        <RotateSourceSecretForm
          source={source}
          generatesSecret={generatesSecret}
          onCancel={close}
          onRotated={(rotated) => {
            close();
            const endsAt = rotated.source.secretRotationEndsAt;
            if (rotated.secret !== null)
              reveal.reveal({ occasion: 'secret', receiveUrl: null, secret: rotated.secret, previousEndsAt: endsAt });
            else
              notifySuccess(
                endsAt === null
                  ? 'Secret rotated: only the new secret verifies.'
                  : `Secret rotated: the previous one verifies until ${formatTimestamp(endsAt)}.`,
              );
          }}
        />
      </Modal>
      <SourceRevealModal reveal={reveal} />
    </>
  );
}
