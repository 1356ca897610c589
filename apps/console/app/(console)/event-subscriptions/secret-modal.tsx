'use client';

import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { ShownOnceValue } from '@/components/shown-once-value';

interface SecretModalProps {
  secret: string | null;
  /** What happened: "created" or "rotated" (with the end of the old secret's overlap). */
  occasion: 'created' | 'rotated';
  previousEndsAt?: string | null;
  onClose: () => void;
}

/** The signing secret, shown this once. */
export function SecretModal({ secret, occasion, previousEndsAt, onClose }: SecretModalProps) {
  return (
    <Modal opened={secret !== null} onClose={onClose} title="Signing secret" size="lg">
      {secret !== null && (
        <Stack>
          <Alert color="yellow" title="Shown only now">
            Copy the secret now: it is not shown again. Receivers verify the Svc-Signature header with it (HMAC-SHA256
            of &quot;t.body&quot; keyed by the base64url decoding of the part after whsec_).
          </Alert>
          <ShownOnceValue value={secret} copyLabel="Copy secret" testId="subscription-secret" />
          {occasion === 'rotated' && (
            <Text size="sm" c="dimmed">
              {previousEndsAt
                ? `The previous secret keeps signing until ${previousEndsAt}: deliveries carry one v1 per secret.`
                : 'The previous secret no longer signs.'}
            </Text>
          )}
          <Group justify="flex-end">
            <Button onClick={onClose}>I have copied it</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
