'use client';

import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useRouter } from 'next/navigation';
import type { TenantChoices } from '@/components/tenant-select';
import { EndpointForm } from './endpoint-form';
import { SecretRevealModal } from './secret-reveal-modal';
import { useSecretReveal } from '@/lib/use-secret-reveal';

/** Opens the endpoint form; `tenantId` picks the tenant to start with (the operator may pick another). */
export function NewEndpointButton({ tenantId, tenants }: { tenantId: string | null; tenants: TenantChoices }) {
  const [opened, { open, close }] = useDisclosure(false);
  const reveal = useSecretReveal();
  const router = useRouter();
  return (
    <>
      <Button onClick={open}>New endpoint</Button>
      <Modal opened={opened} onClose={close} title="New endpoint" size="xl">
        <EndpointForm
          tenantId={tenantId}
          tenants={tenants}
          onDone={close}
          onCreated={(secret, endpointId) => {
            close();
            // An ed25519 endpoint has no secret to show: its page shows the public key receivers use.
            if (secret === null) router.push(`/endpoints/${encodeURIComponent(endpointId)}`);
            else reveal.reveal(secret);
          }}
        />
      </Modal>
      <SecretRevealModal reveal={reveal} />
    </>
  );
}
