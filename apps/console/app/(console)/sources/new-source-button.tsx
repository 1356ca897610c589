'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useSecretReveal } from '@/lib/use-secret-reveal';
import type { TenantChoices } from '@/components/tenant-select';
import type { EventTypeChoice } from '../messages/message.types';
import { SourceForm } from './source-form';
import { SourceRevealModal, type SourceShownOnce } from './source-reveal-modal';
import type { VerifierKind } from './source.types';

interface NewSourceButtonProps {
  /** The tenant to start with (the operator may pick another). */
  tenantId: string | null;
  tenants: TenantChoices;
  kinds: VerifierKind[];
  eventTypes: EventTypeChoice[];
}

/** Opens the source form; once created, its receive URL (and a generated secret) are shown once. */
export function NewSourceButton({ tenantId, tenants, kinds, eventTypes }: NewSourceButtonProps) {
  const [opened, { open, close }] = useDisclosure(false);
  const reveal = useSecretReveal<SourceShownOnce>();
  return (
    <>
      <Button onClick={open}>New source</Button>
      <Modal opened={opened} onClose={close} title="New source" size="xl">
        <SourceForm
          tenantId={tenantId}
          tenants={tenants}
          kinds={kinds}
          eventTypes={eventTypes}
          onDone={close}
          onCreated={(created) => {
            close();
            reveal.reveal({
              occasion: 'created',
              receiveUrl: created.receiveUrl,
              secret: created.secret,
              previousEndsAt: null,
            });
          }}
        />
      </Modal>
      <SourceRevealModal reveal={reveal} />
    </>
  );
}
