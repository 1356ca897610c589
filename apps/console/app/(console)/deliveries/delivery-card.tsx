'use client';

import type { ReactNode } from 'react';
import { Anchor, Badge, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { CopyableId } from '@/components/copyable-id';
import { AttemptTimeline } from './attempt-timeline';
import { DeliveryTargetLine } from './delivery-target-line';
import { DeliveryStatusBadge } from './delivery-status-badge';
import { isReplayable, lastResult, type DeliveryWithAttempts } from './delivery.types';
import { ReplayButton } from './replay-button';
import { RetryNowButton } from './retry-now-button';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </div>
  );
}

interface DeliveryCardProps {
  delivery: DeliveryWithAttempts;
  /** Called after a retry now or a replay, so the page reads the deliveries again at once. */
  onChanged: () => void;
}

/** One delivery of the message (any generation): what it is, where it stands, its actions and its attempts. */
export function DeliveryCard({ delivery, onChanged }: DeliveryCardProps) {
  const title = delivery.kind === 'replay' ? `Replay, generation ${delivery.generation}` : 'Original delivery';
  return (
    <Paper
      withBorder
      p="md"
      component="section"
      aria-label={`Delivery ${delivery.id}`}
      id={delivery.id}
      data-testid="delivery"
      data-generation={delivery.generation}
    >
      <Stack gap="sm">
        <Group justify="space-between" align="flex-start">
          <div>
            <Group gap="xs">
              <Title order={3} size="h4">
                {title}
              </Title>
              <DeliveryStatusBadge status={delivery.status} />
              {delivery.sequence !== null && (
                <Badge color="gray" variant="outline" tt="none" data-testid="delivery-sequence">
                  {`sequence ${delivery.sequence}`}
                </Badge>
              )}
              {delivery.repairedBy && (
                <Anchor href={`#${delivery.repairedBy}`} size="sm" data-testid="delivery-repaired">
                  {`repaired by ${delivery.repairedBy}`}
                </Anchor>
              )}
            </Group>
            <CopyableId id={delivery.id} label={`delivery ${delivery.id}`} />
            <DeliveryTargetLine delivery={delivery} />
            {delivery.replayOf && (
              <Text size="sm">
                This replays{' '}
                <Text span ff="monospace" size="xs">
                  {delivery.replayOf}
                </Text>
              </Text>
            )}
          </div>
          <Group gap="xs">
            {delivery.status === 'retry_wait' && <RetryNowButton delivery={delivery} onDone={onChanged} />}
            {isReplayable(delivery.status) && <ReplayButton delivery={delivery} onReplayed={onChanged} />}
          </Group>
        </Group>
        <SimpleGrid cols={{ base: 2, md: 4 }} spacing="xs" verticalSpacing="xs">
          <Fact label="Attempts">{delivery.attemptCount}</Fact>
          <Fact label="Last result">{lastResult(delivery) ?? 'none yet'}</Fact>
          <Fact label="Next attempt">
            {delivery.nextAttemptAt ? formatTimestamp(delivery.nextAttemptAt) : 'none planned'}
          </Fact>
          <Fact label="Finished">{delivery.finishedAt ? formatTimestamp(delivery.finishedAt) : 'not yet'}</Fact>
          <Fact label="Created">{formatTimestamp(delivery.createdAt)}</Fact>
          <Fact label="Window ends">{formatTimestamp(delivery.expiresAt)}</Fact>
          <Fact label="Body">
            {delivery.bodyBytes} bytes{delivery.transformed ? ', transformed' : ''}
          </Fact>
          <Fact label="Price">
            {delivery.price.totalUsd} USD ({delivery.price.deliveryUnits}{' '}
            {delivery.price.deliveryUnits === 1 ? 'unit' : 'units'})
          </Fact>
        </SimpleGrid>
        <AttemptTimeline attempts={delivery.attempts.nodes} more={delivery.attempts.nextCursor !== null} />
      </Stack>
    </Paper>
  );
}
