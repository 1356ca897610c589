'use client';

import { Badge } from '@mantine/core';
import type { EndpointHealth } from './endpoint.types';

const CIRCUITS: Record<string, { label: string; color: string }> = {
  closed: { label: 'healthy', color: 'green' },
  half_open: { label: 'probing', color: 'yellow' },
  open: { label: 'failing', color: 'red' },
};

function failures(count: number): string {
  return count === 1 ? '1 failure' : `${count} failures`;
}

/** The circuit at a glance: healthy, probing or failing, with the run of failures when there is one. */
export function HealthBadge({ health }: { health: EndpointHealth }) {
  const circuit = CIRCUITS[health.circuit] ?? { label: health.circuit, color: 'gray' };
  return (
    <Badge color={circuit.color} variant="dot" tt="none" data-testid="endpoint-health">
      {health.consecutiveFailures > 0 ? `${circuit.label} · ${failures(health.consecutiveFailures)}` : circuit.label}
    </Badge>
  );
}
