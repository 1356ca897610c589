'use client';

import { Group, Progress, Stack, Text } from '@mantine/core';
import type { ReplayCounts } from './replay.types';

/** A share of a whole as a bar width; an empty whole shows an empty bar. */
function share(part: number, whole: number): number {
  return whole === 0 ? 0 : (part / whole) * 100;
}

/**
 * Two bars: how many of the matched dead letters became new deliveries (or were skipped), then how those
 * deliveries ended. `compact` is the one-line version for tables.
 */
export function ReplayProgress({ counts, compact = false }: { counts: ReplayCounts; compact?: boolean }) {
  const { matched, created, skipped, succeeded, failed, pending } = counts;
  const size = compact ? 'sm' : 'lg';
  return (
    <Stack gap={compact ? 4 : 'xs'}>
      <div>
        {!compact && (
          <Group justify="space-between">
            <Text size="sm" fw={500}>
              Created
            </Text>
            <Text size="sm" data-testid="replay-created">
              {`${created} of ${matched} created${skipped > 0 ? `, ${skipped} skipped` : ''}`}
            </Text>
          </Group>
        )}
        <Progress.Root size={size}>
          <Progress.Section value={share(created, matched)} color="blue" aria-label="Created" />
          <Progress.Section value={share(skipped, matched)} color="gray" aria-label="Skipped" />
        </Progress.Root>
      </div>
      <div>
        {!compact && (
          <Group justify="space-between">
            <Text size="sm" fw={500}>
              Delivered
            </Text>
            <Text size="sm" data-testid="replay-delivered">
              {`${succeeded} succeeded, ${failed} failed, ${pending} pending of ${created}`}
            </Text>
          </Group>
        )}
        <Progress.Root size={size}>
          <Progress.Section value={share(succeeded, created)} color="green" aria-label="Succeeded" />
          <Progress.Section value={share(failed, created)} color="red" aria-label="Failed" />
        </Progress.Root>
      </div>
      {compact && (
        <Text size="xs" c="dimmed">
          {`${created}/${matched} created · ${succeeded} ok · ${failed} failed`}
        </Text>
      )}
    </Stack>
  );
}
