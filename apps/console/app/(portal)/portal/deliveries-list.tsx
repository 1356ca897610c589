'use client';

import { useState } from 'react';
import Link from 'next/link';
import { Anchor, Button, Card, Group, Stack, Table, Text } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { AttemptNetworkDetail, ResponseBodyHint } from '@/components/attempt-network-detail';
import { formatTimestampSeconds } from '@/lib/format';
import { replayPortalDelivery, retryPortalDelivery } from './actions';
import { DeliveryBadge } from './badges';
import { PortalDeliveryTarget } from './delivery-target';
import type { PortalDelivery } from './portal.types';

const REPLAYABLE = new Set(['succeeded', 'failed', 'expired']);

/** Replay keeps one idempotency key until a definite answer: clicking again after a lost answer pays once. */
function ReplayButton({ deliveryId, onDone }: { deliveryId: string; onDone(result: ActionResult<string>): void }) {
  const { key, settle } = useIdempotencyKey();
  const [busy, setBusy] = useState(false);
  const replay = async () => {
    setBusy(true);
    const result = await callAction(() => replayPortalDelivery(deliveryId, key));
    settle(result);
    setBusy(false);
    onDone(result);
  };
  return (
    <Button size="xs" variant="light" loading={busy} onClick={() => void replay()}>
      Replay
    </Button>
  );
}

/** Deliveries with their attempt timelines, and retry now (free) or replay (within the session's cap). */
export function DeliveriesList({
  deliveries,
  manage,
  onChanged,
}: {
  deliveries: PortalDelivery[];
  manage: boolean;
  onChanged(): void;
}) {
  if (deliveries.length === 0) return <Text size="sm">No deliveries yet.</Text>;
  const act = async (
    work: () => Promise<{ ok: true } | { ok: false; error: Parameters<typeof notifyApiError>[0] }>,
    done: string,
  ) => {
    const result = await work();
    if (result.ok) notifySuccess(done);
    else notifyApiError(result.error);
    onChanged();
  };
  return (
    <Stack gap="sm" data-testid="portal-deliveries">
      {deliveries.map((delivery) => (
        <Card key={delivery.id} withBorder data-testid="portal-delivery" data-delivery-id={delivery.id}>
          <Group justify="space-between">
            <Group gap="xs">
              <DeliveryBadge status={delivery.status} />
              <Text size="sm">{delivery.eventType}</Text>
              <Text size="xs" c="dimmed">
                {delivery.kind === 'replay' ? `replay of ${delivery.replayOf}` : 'original'} ·{' '}
                <Anchor component={Link} href={`/portal/messages/${delivery.messageId}`} size="xs">
                  message
                </Anchor>
                {delivery.sequence !== null && (
                  <span data-testid="portal-delivery-sequence">{` · sequence ${delivery.sequence}`}</span>
                )}
              </Text>
            </Group>
            {manage ? (
              <Group gap="xs">
                {delivery.status === 'retry_wait' ? (
                  <Button
                    size="xs"
                    variant="light"
                    onClick={() => void act(() => retryPortalDelivery(delivery.id), 'Retrying now')}
                  >
                    Retry now
                  </Button>
                ) : null}
                {REPLAYABLE.has(delivery.status) ? (
                  <ReplayButton
                    deliveryId={delivery.id}
                    onDone={(result) => void act(async () => result, 'Replay queued')}
                  />
                ) : null}
              </Group>
            ) : null}
          </Group>
          <PortalDeliveryTarget delivery={delivery} />
          {delivery.attempts && delivery.attempts.nodes.length > 0 ? (
            <Table mt="xs" data-testid="portal-attempts">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>#</Table.Th>
                  <Table.Th>When</Table.Th>
                  <Table.Th>Result</Table.Th>
                  <Table.Th>Duration</Table.Th>
                  <Table.Th>Response</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {delivery.attempts.nodes.map((attempt) => (
                  <Table.Tr key={attempt.id} data-testid="portal-attempt">
                    <Table.Td>
                      {attempt.number} ({attempt.trigger})
                    </Table.Td>
                    <Table.Td>{formatTimestampSeconds(attempt.startedAt)}</Table.Td>
                    <Table.Td data-testid="portal-attempt-result">
                      {attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : (attempt.errorKind ?? 'no answer')}
                      <AttemptNetworkDetail detail={attempt.errorDetail} />
                    </Table.Td>
                    <Table.Td>{attempt.durationMs} ms</Table.Td>
                    <Table.Td>
                      {attempt.responseBody !== null ? (
                        <Text size="xs" ff="monospace" lineClamp={2}>
                          {attempt.responseBody}
                        </Text>
                      ) : attempt.statusCode !== null ? (
                        <ResponseBodyHint audience="receiver" />
                      ) : (
                        '—'
                      )}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          ) : (
            <Text size="xs" c="dimmed" mt="xs">
              No attempt yet.
            </Text>
          )}
        </Card>
      ))}
    </Stack>
  );
}
