'use client';

import { useEffect } from 'react';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { Alert, Anchor, Group, Stack, Text } from '@mantine/core';
import { CopyableId } from '@/components/copyable-id';
import { DeliveryCountsTable } from '../../messages/delivery-counts-table';
import { MessageStatusBadge } from '../../messages/message-status-badge';
import type { Message } from '../../messages/message.types';
import { useLiveMessage } from '../../messages/use-live-message';

/** The test message's ID, status and delivery counts, refreshed until the status is terminal. */
export function TestMessageResult({ initial }: { initial: Message }) {
  const router = useRouter();
  const { message, refreshing, error } = useLiveMessage(initial);
  // Once the delivery settles, the endpoint's health and queued count on the page behind have moved.
  useEffect(() => {
    if (!refreshing) router.refresh();
  }, [refreshing, router]);

  return (
    <Stack gap="sm" data-testid="test-message-result">
      <Group gap="xs">
        <Text size="sm" fw={500}>
          Test message
        </Text>
        <MessageStatusBadge status={message.status} refreshing={refreshing} />
      </Group>
      <CopyableId id={message.id} label="test message" />
      <DeliveryCountsTable counts={message.deliveryCounts} />
      <Text size="sm" c="dimmed">
        {refreshing ? 'Following the delivery until it finishes…' : `Finished. Charged ${message.price.totalUsd} USD.`}{' '}
        <Anchor component={Link} href={`/messages/${encodeURIComponent(message.id)}`} size="sm">
          Open the message
        </Anchor>
      </Text>
      {error && (
        <Alert color="orange" title="Could not refresh the status">
          {error.message}
        </Alert>
      )}
    </Stack>
  );
}
