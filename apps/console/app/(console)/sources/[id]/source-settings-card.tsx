'use client';

import { Badge, Code, Group, Stack, Text, Title } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { valueText } from '@/lib/key-value-rows';
import { FieldTable } from '@/components/field-table';
import { EventTypeMapping } from '../event-type-mapping';
import { KIND_HINTS, type Source } from '../source.types';

function Dimmed({ children }: { children: string }) {
  return (
    <Text size="sm" c="dimmed">
      {children}
    </Text>
  );
}

/** The kind's settings as the API stores them (defaults filled in); the secret is never among them. */
function Settings({ verification }: { verification: Record<string, unknown> }) {
  const entries = Object.entries(verification).filter(([name]) => name !== 'kind');
  if (entries.length === 0) return <Dimmed>none (this kind has no settings)</Dimmed>;
  return (
    <Code block data-testid="source-settings">
      {entries.map(([name, value]) => `${name}: ${value === null ? 'none' : JSON.stringify(value)}`).join('\n')}
    </Code>
  );
}

/** Everything the API lets anyone read back about a source; its secret and receive URL are write-only. */
export function SourceSettingsCard({ source }: { source: Source }) {
  const metadata = Object.entries(source.metadata);
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Settings
      </Title>
      <FieldTable
        label="Source settings"
        fields={[
          {
            label: 'Verifier kind',
            value: (
              <Stack gap={2}>
                <Text size="sm" ff="monospace">
                  {source.kind}
                </Text>
                {KIND_HINTS[source.kind] && <Dimmed>{KIND_HINTS[source.kind]!}</Dimmed>}
              </Stack>
            ),
          },
          { label: 'Kind settings', value: <Settings verification={source.verification} /> },
          { label: 'Event type', value: <EventTypeMapping source={source} /> },
          {
            label: 'Billing key',
            value: (
              <Text size="sm" ff="monospace">
                {source.billingKeyId}
              </Text>
            ),
          },
          {
            label: 'Metadata',
            value:
              metadata.length === 0 ? (
                <Dimmed>none</Dimmed>
              ) : (
                <Group gap={4}>
                  {metadata.map(([key, value]) => (
                    <Badge key={key} variant="outline" color="gray" tt="none">
                      {key}={valueText(value)}
                    </Badge>
                  ))}
                </Group>
              ),
          },
          { label: 'Created', value: formatTimestamp(source.createdAt) },
          { label: 'Updated', value: formatTimestamp(source.updatedAt) },
        ]}
      />
    </Stack>
  );
}
