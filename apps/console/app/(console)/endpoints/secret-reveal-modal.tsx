'use client';

import { Alert, Button, Code, Group, Modal, Stack, Text } from '@mantine/core';
import type { SecretReveal } from '@/lib/use-secret-reveal';
import { ShownOnceValue } from '@/components/shown-once-value';

/** Shows a new signing secret once, with a copy button; closing it forgets the secret. */
export function SecretRevealModal({ reveal }: { reveal: SecretReveal }) {
  const { secret, opened, close, forget } = reveal;
  return (
    <Modal
      opened={opened && secret !== null}
      onClose={close}
      onExitTransitionEnd={forget}
      title="Signing secret"
      size="lg"
      closeOnClickOutside={false}
    >
      {secret !== null && (
        <Stack>
          <Alert color="yellow" title="Store it now">
            This secret is shown once; store it now. It cannot be shown again.
          </Alert>
          <Text size="sm">
            Receivers use it to check the <Code>webhook-signature</Code> header of each delivery.
          </Text>
          <ShownOnceValue value={secret} copyLabel="Copy secret" testId="signing-secret" />
          <Group justify="flex-end">
            <Button onClick={close}>I have stored it</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
