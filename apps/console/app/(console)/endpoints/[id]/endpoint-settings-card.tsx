'use client';

import { Badge, Group, Stack, Text, Title } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { FieldTable } from '@/components/field-table';
import { endpointTarget } from '../endpoint-url';
import type { Endpoint } from '../endpoint.types';

function Dimmed({ children }: { children: string }) {
  return (
    <Text size="sm" c="dimmed">
      {children}
    </Text>
  );
}

function Tags({ values }: { values: string[] }) {
  if (values.length === 0) return <Dimmed>none</Dimmed>;
  return (
    <Group gap={4}>
      {values.map((value) => (
        <Badge key={value} variant="outline" color="gray" tt="none">
          {value}
        </Badge>
      ))}
    </Group>
  );
}

/** Everything the API lets anyone read back about an endpoint; write-only values show as names or set/not set. */
export function EndpointSettingsCard({ endpoint }: { endpoint: Endpoint }) {
  const metadata = Object.entries(endpoint.metadata).map(([key, value]) => `${key}=${value}`);
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Settings
      </Title>
      <FieldTable
        label="Endpoint settings"
        fields={[
          {
            label: 'URL',
            value: (
              <Text ff="monospace" size="sm">
                {endpointTarget(endpoint)}
              </Text>
            ),
          },
          { label: 'Description', value: endpoint.description || <Dimmed>none</Dimmed> },
          { label: 'Events', value: <Tags values={endpoint.events} /> },
          {
            label: 'Delivery order',
            value:
              endpoint.ordering === 'ordered'
                ? `ordered, one at a time; on a final failure: ${endpoint.orderingOnFailure === 'hold' ? 'hold (pause the endpoint)' : 'continue'}`
                : 'independent',
          },
          { label: 'Max concurrency', value: endpoint.maxConcurrency },
          { label: 'Rate per second', value: endpoint.ratePerSecond },
          { label: 'Timeout', value: `${endpoint.timeoutSeconds} s` },
          {
            label: 'Retry delays',
            value: endpoint.retryDelaysSeconds.length ? (
              endpoint.retryDelaysSeconds.map((delay) => `${delay} s`).join(', ')
            ) : (
              <Dimmed>no retries</Dimmed>
            ),
          },
          { label: 'Custom headers', value: <Tags values={endpoint.headers} /> },
          { label: 'Authorization', value: endpoint.hasAuthorization ? 'set' : 'not set' },
          { label: 'Metadata', value: <Tags values={metadata} /> },
          { label: 'Created', value: formatTimestamp(endpoint.createdAt) },
          { label: 'Updated', value: formatTimestamp(endpoint.updatedAt) },
        ]}
      />
    </Stack>
  );
}
