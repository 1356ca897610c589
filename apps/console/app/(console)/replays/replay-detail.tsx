'use client';

import Link from 'next/link';
import { Alert, Anchor, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { knownProblem } from '@/lib/api-problem';
import { formatTimestamp } from '@/lib/format';
import { listHref } from '@/lib/list-href';
import { usePolled } from '@/lib/use-polled';
import { CopyableId } from '@/components/copyable-id';
import { FieldTable } from '@/components/field-table';
import { getReplayAction } from './actions';
import { CancelReplayButton } from './cancel-replay-button';
import { ReplayProgress } from './replay-progress';
import { ReplayStatusBadge } from './replay-status-badge';
import { isSettledReplay, REASON_TEXT, replayOutcome, type Replay } from './replay.types';

interface ReplayDetailProps {
  initial: Replay;
  endpointName: string | null;
  tenantName: string | null;
}

const STATE_TEXT: Record<string, string> = {
  running: 'Creating deliveries in batches: this page refreshes until the replay has finished.',
  delivering: 'Every delivery is created; this page refreshes until each one has finished.',
};

/** "max_cost_reached: creation stopped before ..." */
function describeReason(reason: string): string {
  const text = REASON_TEXT[reason];
  return text ? `${reason}: ${text}` : reason;
}

/** The dead letters' window, in UTC like every time in the console. */
function describeWindow(replay: Replay): string {
  return `${formatTimestamp(replay.createdAfter)} to ${formatTimestamp(replay.createdBefore)}`;
}

/**
 * A replay with its progress and cost, refreshed while it creates or delivers; it may be canceled while it still
 * creates deliveries.
 */
export function ReplayDetail({ initial, endpointName, tenantName }: ReplayDetailProps) {
  const {
    value: replay,
    refreshing,
    error,
    refreshNow,
  } = usePolled(initial.id, initial, () => getReplayAction(initial.id), isSettledReplay);
  const endpointHref = `/endpoints/${encodeURIComponent(replay.endpointId)}`;
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Group gap="xs">
            <Title order={1} size="h2">
              Replay of {endpointName ?? replay.endpointId}
            </Title>
            <ReplayStatusBadge replay={replay} refreshing={refreshing} />
          </Group>
          <CopyableId id={replay.id} label={`replay ${replay.id}`} />
          <Text size="sm" c="dimmed" data-testid="replay-state">
            {STATE_TEXT[replay.status] ??
              (refreshing
                ? `The replay has stopped (${replay.status}); this page refreshes until the deliveries it created have finished.`
                : `The replay has finished (${replayOutcome(replay).label}).`)}
          </Text>
          {replay.reason && (
            <Text size="sm" data-testid="replay-reason">
              Reason: {describeReason(replay.reason)}
            </Text>
          )}
        </div>
        {replay.status === 'running' && <CancelReplayButton replay={replay} onCanceled={refreshNow} />}
      </Group>
      {error && (
        <Alert color="orange" title="Could not refresh this replay" maw={720}>
          {knownProblem(error)?.explanation ?? error.message} The page keeps trying.
        </Alert>
      )}
      <Paper withBorder p="lg">
        <Stack>
          <Title order={2} size="h3">
            Progress
          </Title>
          <ReplayProgress counts={replay.counts} />
          <Text size="sm" data-testid="replay-cost">
            {`${replay.costUsd} USD charged so far of ${replay.estimate.costUsd} USD estimated for ${replay.estimate.deliveries} deliveries`}
            {replay.maxCostUsd !== null ? ` (bound: ${replay.maxCostUsd} USD)` : ' (no bound)'}
          </Text>
        </Stack>
      </Paper>
      <Paper withBorder p="lg">
        <Stack gap="xs">
          <Title order={2} size="h3">
            Selection
          </Title>
          <FieldTable
            label="Replay fields"
            fields={[
              {
                label: 'Endpoint',
                value: (
                  <Anchor component={Link} href={endpointHref} size="sm">
                    {endpointName ?? replay.endpointId}
                  </Anchor>
                ),
              },
              {
                label: 'Tenant',
                value: (
                  <Anchor component={Link} href={`/tenants/${encodeURIComponent(replay.tenantId)}/endpoints`} size="sm">
                    {tenantName ?? replay.tenantId}
                  </Anchor>
                ),
              },
              { label: 'Dead letters created', value: describeWindow(replay) },
              { label: 'Event type', value: replay.eventType ?? 'every event type' },
              { label: 'Max cost', value: replay.maxCostUsd === null ? 'no bound' : `${replay.maxCostUsd} USD` },
              {
                label: 'Paid by key',
                value: (
                  <Text ff="monospace" size="sm">
                    {replay.payingKeyId}
                  </Text>
                ),
              },
              { label: 'Started', value: formatTimestamp(replay.createdAt) },
              { label: 'Finished', value: replay.finishedAt ? formatTimestamp(replay.finishedAt) : 'not yet' },
            ]}
          />
          <Group gap="md">
            <Anchor component={Link} size="sm" href={endpointHref}>
              The endpoint&apos;s recent deliveries (replays show their generation)
            </Anchor>
            <Anchor component={Link} size="sm" href={listHref('/dead-letters', { endpoint: replay.endpointId })}>
              Its dead letters
            </Anchor>
          </Group>
        </Stack>
      </Paper>
    </Stack>
  );
}
