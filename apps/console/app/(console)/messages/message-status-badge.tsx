'use client';

import { Badge, Group, Loader, Tooltip } from '@mantine/core';

const COLORS: Record<string, string> = {
  scheduled: 'violet',
  queued: 'blue',
  delivering: 'cyan',
  succeeded: 'green',
  partially_failed: 'orange',
  failed: 'red',
  canceled: 'gray',
  no_destinations: 'gray',
};

interface MessageStatusBadgeProps {
  status: string;
  /** Failed or expired original deliveries a replay has delivered since: shown beside the spec's status. */
  repairedCount?: number;
  refreshing?: boolean;
}

/** The message's status as the API names it; a spinner beside it while the page keeps it fresh. */
export function MessageStatusBadge({ status, repairedCount = 0, refreshing = false }: MessageStatusBadgeProps) {
  return (
    <Group gap={6} wrap="nowrap">
      <Badge color={COLORS[status] ?? 'gray'} variant="light" tt="none" data-testid="message-status">
        {status}
      </Badge>
      {repairedCount > 0 && (
        <Tooltip label="Failed deliveries of this message that a replay has delivered since; the status stays the original deliveries'">
          <Badge color="teal" variant="outline" tt="none" data-testid="message-repaired">
            {`repaired ${repairedCount}`}
          </Badge>
        </Tooltip>
      )}
      {refreshing && <Loader size={14} aria-label="Refreshing the status" />}
    </Group>
  );
}
