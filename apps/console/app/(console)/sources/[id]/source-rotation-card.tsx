'use client';

import { Stack, Text, Title } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { FieldTable } from '@/components/field-table';
import type { Source } from '../source.types';

function Overlap({ endsAt, none, testId }: { endsAt: string | null; none: string; testId: string }) {
  if (endsAt === null)
    return (
      <Text size="sm" c="dimmed" data-testid={testId}>
        {none}
      </Text>
    );
  return (
    <Text size="sm" fw={500} data-testid={testId}>
      until {formatTimestamp(endsAt)}
    </Text>
  );
}

/** The secret's and the receive URL's versions, and while a rotated-out one still works, when that ends. */
export function SourceRotationCard({ source }: { source: Source }) {
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Secret and receive URL
      </Title>
      <Text size="sm" c="dimmed">
        Neither can be read back: the receive URL is shown once, when the source is created or its URL rotated, and a
        generated secret once, when it is made. A lost one is replaced by rotating it.
      </Text>
      <FieldTable
        label="Secret and receive URL"
        fields={[
          { label: 'Secret version', value: source.secretVersion },
          {
            label: 'Previous secret verifies',
            value: (
              <Overlap
                endsAt={source.secretRotationEndsAt}
                none="no: only the current secret"
                testId="secret-overlap"
              />
            ),
          },
          { label: 'Receive URL version', value: source.tokenVersion },
          {
            label: 'Previous URL answers',
            value: (
              <Overlap endsAt={source.tokenRotationEndsAt} none="no: only the current URL" testId="token-overlap" />
            ),
          },
          { label: 'Version', value: source.version },
        ]}
      />
    </Stack>
  );
}
