'use client';

import { Badge, Loader, Group } from '@mantine/core';

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

/** The message's status as the API names it; a spinner beside it while the page keeps it fresh. */
export function MessageStatusBadge({ status, refreshing = false }: { status: string; refreshing?: boolean }) {
  return (
    <Group gap={6} wrap="nowrap">
      <Badge color={COLORS[status] ?? 'gray'} variant="light" tt="none" data-testid="message-status">
        {status}
      </Badge>
      {refreshing && <Loader size={14} aria-label="Refreshing the status" />}
    </Group>
  );
}
