'use client';

import { Badge, Tooltip } from '@mantine/core';
import type { Endpoint } from './endpoint.types';

const COLORS: Record<string, string> = { enabled: 'green', paused: 'yellow', disabled: 'red' };

/** enabled, paused, or disabled with the reason the service gave. */
export function StatusBadge({ endpoint }: { endpoint: Pick<Endpoint, 'status' | 'disabledReason'> }) {
  const badge = (
    <Badge color={COLORS[endpoint.status] ?? 'gray'} variant="light" data-testid="endpoint-status">
      {endpoint.status === 'disabled' && endpoint.disabledReason
        ? `disabled: ${endpoint.disabledReason}`
        : endpoint.status}
    </Badge>
  );
  if (endpoint.status !== 'disabled' || !endpoint.disabledReason) return badge;
  return <Tooltip label={endpoint.disabledReason}>{badge}</Tooltip>;
}
