'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Modal } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { createSubscriptionAction } from './actions';
import { SecretModal } from './secret-modal';
import { SubscriptionForm, type EnvironmentChoice } from './subscription-form';

/** Opens the subscription form; once created, its secret is shown once. */
export function NewSubscriptionButton({
  environments,
  events,
}: {
  environments: EnvironmentChoice[];
  events: string[];
}) {
  const router = useRouter();
  const [opened, { open, close }] = useDisclosure(false);
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <Button onClick={open}>New subscription</Button>
      <Modal opened={opened} onClose={close} title="New event subscription" size="lg">
        <SubscriptionForm
          environments={environments}
          events={events}
          subscription={null}
          submitLabel="Create subscription"
          onCancel={close}
          submit={async (input, key) => {
            const result = await createSubscriptionAction(input, key);
            if (result.ok) {
              close();
              setSecret(result.data.secret);
              router.refresh();
            }
            return result;
          }}
        />
      </Modal>
      <SecretModal secret={secret} occasion="created" onClose={() => setSecret(null)} />
    </>
  );
}
