'use client';

import { Badge } from '@mantine/core';

const COLORS: Record<string, string> = {
  scheduled: 'violet',
  queued: 'blue',
  in_flight: 'cyan',
  retry_wait: 'yellow',
  succeeded: 'green',
  failed: 'red',
  expired: 'orange',
  canceled: 'gray',
};

/** A delivery's status as the API names it. */
export function DeliveryStatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light" tt="none" data-testid="delivery-status">
      {status}
    </Badge>
  );
}
