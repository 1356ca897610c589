'use client';

import { Badge, Group, Loader } from '@mantine/core';

const COLORS: Record<string, string> = {
  running: 'blue',
  delivering: 'cyan',
  completed: 'green',
  failed: 'red',
  canceled: 'gray',
};

/** A replay's status as the API names it; a spinner beside it while the page keeps it fresh. */
export function ReplayStatusBadge({ status, refreshing = false }: { status: string; refreshing?: boolean }) {
  return (
    <Group gap={6} wrap="nowrap">
      <Badge color={COLORS[status] ?? 'gray'} variant="light" tt="none" data-testid="replay-status">
        {status}
      </Badge>
      {refreshing && <Loader size={14} aria-label="Refreshing the replay" />}
    </Group>
  );
}
