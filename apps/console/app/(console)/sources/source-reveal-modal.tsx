'use client';

import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import type { SecretReveal } from '@/lib/use-secret-reveal';
import { ShownOnceValue } from '@/components/shown-once-value';

/** What a create or rotation showed this once: the receive URL, a generated secret, or both. */
export interface SourceShownOnce {
  /** Names the modal: after create, after a receive URL rotation, after a secret rotation. */
  occasion: 'created' | 'token' | 'secret';
  receiveUrl: string | null;
  secret: string | null;
  /** When the previous URL or secret stops working (null: at once, or there was none). */
  previousEndsAt: string | null;
}

const TITLES: Record<SourceShownOnce['occasion'], string> = {
  created: 'Source created',
  token: 'New receive URL',
  secret: 'New secret',
};

/** True when the answer has something to show once. */
export function hasShownOnce(shown: Pick<SourceShownOnce, 'receiveUrl' | 'secret'>): boolean {
  return shown.receiveUrl !== null || shown.secret !== null;
}

/** Shows a source's receive URL and generated secret once, with copy buttons; closing it forgets them. */
export function SourceRevealModal({ reveal }: { reveal: SecretReveal<SourceShownOnce> }) {
  const { secret: shown, opened, close, forget } = reveal;
  return (
    <Modal
      opened={opened && shown !== null}
      onClose={close}
      onExitTransitionEnd={forget}
      title={shown ? TITLES[shown.occasion] : ''}
      size="lg"
      closeOnClickOutside={false}
    >
      {shown !== null && (
        <Stack>
          <Alert color="yellow" title="Shown once: store it now">
            {shown.receiveUrl !== null && shown.secret !== null
              ? 'The receive URL and the secret are shown once. They cannot be shown again.'
              : shown.receiveUrl !== null
                ? 'This receive URL is shown once; store it now. It cannot be shown again: a lost URL can only be replaced by rotating it.'
                : 'This secret is shown once; store it now. It cannot be shown again.'}
          </Alert>
          {shown.receiveUrl !== null && (
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                Receive URL
              </Text>
              <Text size="sm" c="dimmed">
                Give it to the provider as its webhook URL. It is the source&apos;s address and its credential: anyone
                holding it can send requests, which are still verified.
              </Text>
              <ShownOnceValue value={shown.receiveUrl} copyLabel="Copy URL" testId="receive-url" />
            </Stack>
          )}
          {shown.secret !== null && (
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                Secret
              </Text>
              <Text size="sm" c="dimmed">
                Give it to the sender: it signs (or, for bearer, sends) it with every request.
              </Text>
              <ShownOnceValue value={shown.secret} copyLabel="Copy secret" testId="source-secret" />
            </Stack>
          )}
          {shown.previousEndsAt !== null && (
            <Text size="sm" data-testid="previous-ends">
              {shown.occasion === 'token'
                ? 'The previous receive URL keeps answering'
                : 'The previous secret keeps verifying'}{' '}
              until {formatTimestamp(shown.previousEndsAt)}.
            </Text>
          )}
          <Group justify="flex-end">
            <Button onClick={close}>I have stored it</Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
