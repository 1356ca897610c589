'use client';

import { Alert, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { CopyableId } from '@/components/copyable-id';
import { knownProblem } from '@/lib/api-problem';
import { DeliveryCountsTable } from './delivery-counts-table';
import { MessageFields } from './message-fields';
import { MessageStatusBadge } from './message-status-badge';
import type { Message } from './message.types';
import { useLiveMessage } from './use-live-message';

/** A message with its status and delivery counts, refreshed until the status is terminal. */
export function MessageDetail({ initial, tenantName }: { initial: Message; tenantName: string | null }) {
  const { message, refreshing, error } = useLiveMessage(initial);
  return (
    <Stack>
      <div>
        <Group gap="xs">
          <Title order={2}>{message.eventType}</Title>
          <MessageStatusBadge status={message.status} refreshing={refreshing} />
        </Group>
        <CopyableId id={message.id} label={`message ${message.id}`} />
        <Text size="sm" c="dimmed">
          {refreshing
            ? 'Deliveries are under way: this page refreshes until every one of them has finished.'
            : 'Every delivery of this message has finished.'}
        </Text>
      </div>
      {error && (
        <Alert color="orange" title="Could not refresh this message" maw={720}>
          {knownProblem(error)?.explanation ?? error.message} The page keeps trying.
        </Alert>
      )}
      <Paper withBorder p="lg">
        <Stack gap="xs">
          <Title order={3}>Deliveries</Title>
          <DeliveryCountsTable counts={message.deliveryCounts} />
        </Stack>
      </Paper>
      <Paper withBorder p="lg">
        <MessageFields message={message} tenantName={tenantName} />
      </Paper>
    </Stack>
  );
}
