'use client';

import { Stack, Title } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { FieldTable } from '@/components/field-table';
import { HealthBadge } from '../health-badge';
import type { Endpoint } from '../endpoint.types';

const CIRCUIT_NAMES: Record<string, string> = {
  closed: 'closed (deliveries flow)',
  half_open: 'half open (one probe at a time)',
  open: 'open (deliveries wait for the next probe)',
};

function when(iso: string | null, none: string): string {
  return iso === null ? none : formatTimestamp(iso);
}

/** The circuit, the signing secret's version and the revisions that tell one configuration from the next. */
export function EndpointHealthCard({ endpoint }: { endpoint: Endpoint }) {
  const { health } = endpoint;
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Health and secret
      </Title>
      <FieldTable
        label="Endpoint health"
        fields={[
          { label: 'Health', value: <HealthBadge health={health} /> },
          { label: 'Circuit', value: CIRCUIT_NAMES[health.circuit] ?? health.circuit },
          { label: 'Consecutive failures', value: health.consecutiveFailures },
          { label: 'Last success', value: when(health.lastSuccessAt, 'never') },
          { label: 'Last failure', value: when(health.lastFailureAt, 'never') },
          { label: 'Next probe', value: when(health.nextProbeAt, 'none scheduled') },
          { label: 'Queued deliveries', value: endpoint.queuedCount },
          { label: 'Secret version', value: endpoint.secretVersion },
          { label: 'Old secret expires', value: when(endpoint.oldSecretExpiresAt, 'no old secret') },
          { label: 'URL revision', value: endpoint.urlRevision },
          { label: 'Transform version', value: endpoint.transformVersion },
          { label: 'Version', value: endpoint.version },
        ]}
      />
    </Stack>
  );
}
