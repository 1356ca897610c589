'use client';

import { Badge } from '@mantine/core';

const COLORS: Record<string, string> = { active: 'green', paused: 'yellow' };

/** active, or paused (the receive URL answers 503 so providers send again later). */
export function SourceStatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light" data-testid="source-status">
      {status}
    </Badge>
  );
}
