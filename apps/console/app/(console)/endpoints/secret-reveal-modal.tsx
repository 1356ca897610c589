'use client';

import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from '@mantine/core';
import type { SecretReveal } from './use-secret-reveal';

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
          <Group wrap="nowrap" align="center">
            <Code
              block
              flex={1}
              data-testid="signing-secret"
              style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}
            >
              {secret}
            </Code>
            <CopyButton value={secret}>
              {({ copied, copy }) => (
                <Button variant={copied ? 'filled' : 'light'} color={copied ? 'teal' : undefined} onClick={copy}>
                  {copied ? 'Copied' : 'Copy secret'}
                </Button>
              )}
            </CopyButton>
          </Group>
          <Group justify="flex-end">
            <Button onClick={close}>I have stored it</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
