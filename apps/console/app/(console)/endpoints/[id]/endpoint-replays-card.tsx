'use client';

import Link from 'next/link';
import { Anchor, Group, Stack, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';
import { listHref } from '@/lib/list-href';
import { ReplaysTable } from '../../replays/replays-table';
import type { Replay } from '../../replays/replay.types';
import { StartReplayButton } from '../../replays/start-replay-button';

interface EndpointReplaysCardProps {
  endpointId: string;
  endpointName: string;
  replays: ActionResult<{ replays: Replay[]; total: number }>;
}

/** The endpoint's newest bulk replays, and "Replay dead letters" to start one after seeing its estimate. */
export function EndpointReplaysCard({ endpointId, endpointName, replays }: EndpointReplaysCardProps) {
  return (
    <Stack gap="xs">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2} size="h3">
            Replays
          </Title>
          <Text size="sm" c="dimmed">
            {replays.ok && replays.data.total > replays.data.replays.length
              ? `The newest ${replays.data.replays.length} of ${replays.data.total} replays, newest first.`
              : 'Bulk replays of this endpoint’s dead letters, newest first.'}
          </Text>
        </div>
        <Group gap="md">
          <Anchor component={Link} size="sm" href={listHref('/replays', { endpoint: endpointId })}>
            All replays of this endpoint
          </Anchor>
          <StartReplayButton endpointId={endpointId} endpointName={endpointName} />
        </Group>
      </Group>
      {!replays.ok && (
        <Text size="sm" c="red">
          Could not load the replays: {knownProblem(replays.error)?.explanation ?? replays.error.message}
        </Text>
      )}
      {replays.ok && (
        <ReplaysTable
          replays={replays.data.replays}
          endpointNames={null}
          emptyText="This endpoint has no replays."
          label="Endpoint replays"
        />
      )}
    </Stack>
  );
}
