'use client';

import { Alert, Badge, Group, Paper, Stack, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { CopyableId } from '@/components/copyable-id';
import { DeliveryCard } from '../deliveries/delivery-card';
import { CancelMessageButton } from './cancel-message-button';
import { DeliveryCountsTable } from './delivery-counts-table';
import { MessageContentCard } from './message-content-card';
import { MessageFields } from './message-fields';
import { MessageStatusBadge } from './message-status-badge';
import type { MessageContent, MessageInspection } from './message.types';
import { RedactMessageButton } from './redact-message-button';
import { useLiveMessageInspection } from './use-live-message';

interface MessageDetailProps {
  initial: MessageInspection;
  tenantName: string | null;
  content: ActionResult<MessageContent>;
}

/**
 * A message with its status, content and every delivery with its attempts, refreshed while any delivery (replays
 * too) is pending or in flight; cancel and redact after a confirmation.
 */
export function MessageDetail({ initial, tenantName, content }: MessageDetailProps) {
  const { value, refreshing, error, refreshNow } = useLiveMessageInspection(initial);
  const { message, deliveries, deliveriesComplete } = value;
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Group gap="xs">
            <Title order={1} size="h2">
              {message.eventType}
            </Title>
            <MessageStatusBadge status={message.status} repairedCount={message.repairedCount} refreshing={refreshing} />
            {message.redactionStatus && (
              <Badge color="dark" variant="light" tt="none" data-testid="redaction-status">
                {`redaction ${message.redactionStatus}`}
              </Badge>
            )}
          </Group>
          <CopyableId id={message.id} label={`message ${message.id}`} />
          <Text size="sm" c="dimmed">
            {refreshing
              ? 'Deliveries are under way: this page refreshes until every one of them has finished.'
              : 'Every delivery of this message has finished.'}
          </Text>
        </div>
        <Group gap="xs">
          <CancelMessageButton message={message} onCanceled={refreshNow} />
          <RedactMessageButton message={message} onRedacted={refreshNow} />
        </Group>
      </Group>
      {error && (
        <Alert color="orange" title="Could not refresh this message" maw={720}>
          {knownProblem(error)?.explanation ?? error.message} The page keeps trying.
        </Alert>
      )}
      <Paper withBorder p="lg">
        <Stack gap="sm">
          <div>
            <Title order={2} size="h3">
              Deliveries
            </Title>
            <Text size="sm" c="dimmed">
              The counts are of the original deliveries, which decide the message&apos;s status; below, every delivery
              of every generation (replays too), oldest first, with its attempts.
            </Text>
          </div>
          <DeliveryCountsTable counts={message.deliveryCounts} />
          {deliveries.length === 0 && (
            <Text size="sm" c="dimmed">
              This message has no deliveries.
            </Text>
          )}
          {deliveries.map((delivery) => (
            <DeliveryCard key={delivery.id} delivery={delivery} onChanged={refreshNow} />
          ))}
          {!deliveriesComplete && (
            <Text size="sm" c="dimmed">
              Only the first {deliveries.length} deliveries are shown.
            </Text>
          )}
        </Stack>
      </Paper>
      <Paper withBorder p="lg">
        <MessageContentCard content={content} />
      </Paper>
      <Paper withBorder p="lg">
        <MessageFields message={message} tenantName={tenantName} />
      </Paper>
    </Stack>
  );
}
