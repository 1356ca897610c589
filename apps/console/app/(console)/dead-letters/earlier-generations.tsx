'use client';

import { Stack, Text } from '@mantine/core';
import { formatTimestamp } from '@/lib/format';
import { lastResult, type EarlierGeneration } from '../deliveries/delivery.types';

/** The generations before a dead letter (same message and endpoint), newest first: one failure, one row. */
export function EarlierGenerations({ generations }: { generations: readonly EarlierGeneration[] }) {
  if (generations.length === 0) return null;
  return (
    <Stack gap={0} mt={4} aria-label="Earlier generations" data-testid="earlier-generations">
      <Text size="xs" c="dimmed">
        {generations.length === 1 ? '1 earlier generation:' : `${generations.length} earlier generations:`}
      </Text>
      {generations.map((generation) => (
        <Text
          key={generation.id}
          size="xs"
          c="dimmed"
          data-testid="earlier-generation"
          data-delivery-id={generation.id}
        >
          {generation.kind === 'replay' ? `replay, generation ${generation.generation}` : 'original'} ·{' '}
          {generation.status}
          {lastResult(generation) ? ` (${lastResult(generation)})` : ''} ·{' '}
          {formatTimestamp(generation.finishedAt ?? generation.createdAt)} ·{' '}
          <Text span size="xs" ff="monospace">
            {generation.id}
          </Text>
        </Text>
      ))}
    </Stack>
  );
}
