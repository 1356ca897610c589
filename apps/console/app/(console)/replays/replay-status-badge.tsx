'use client';

import { Badge, Group, Loader } from '@mantine/core';
import { replayOutcome, type Replay } from './replay.types';

/**
 * A replay's outcome: its status as the API names it, or "completed with failures" (red when none of its deliveries
 * arrived); a spinner beside it while the page keeps it fresh.
 */
export function ReplayStatusBadge({
  replay,
  refreshing = false,
}: {
  replay: Pick<Replay, 'status' | 'counts'>;
  refreshing?: boolean;
}) {
  const outcome = replayOutcome(replay);
  return (
    <Group gap={6} wrap="nowrap">
      <Badge color={outcome.color} variant="light" tt="none" data-testid="replay-status" data-outcome={outcome.kind}>
        {outcome.label}
      </Badge>
      {refreshing && <Loader size={14} aria-label="Refreshing the replay" />}
    </Group>
  );
}
