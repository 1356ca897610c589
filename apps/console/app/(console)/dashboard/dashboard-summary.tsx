'use client';

import { Paper, SimpleGrid, Text } from '@mantine/core';
import type { AnalyticsTotals } from './analytics.types';

interface DashboardSummaryProps {
  totals: AnalyticsTotals;
  queueDepth: number;
  oldestDueAgeSeconds: number;
}

function Stat({ label, value, hint, testId }: { label: string; value: string; hint: string; testId: string }) {
  return (
    <Paper withBorder p="md">
      <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
        {label}
      </Text>
      <Text size="xl" fw={700} data-testid={testId}>
        {value}
      </Text>
      <Text size="xs" c="dimmed">
        {hint}
      </Text>
    </Paper>
  );
}

/** "95 s", "12 min", "3.5 h": how long the oldest due delivery has waited. */
function formatAge(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** The window's totals and the queue as it is now. */
export function DashboardSummary({ totals, queueDepth, oldestDueAgeSeconds }: DashboardSummaryProps) {
  const number = (value: number) => value.toLocaleString('en-US');
  return (
    <SimpleGrid cols={{ base: 2, sm: 3, lg: 6 }}>
      <Stat label="Messages" value={number(totals.messages)} hint="accepted in the window" testId="total-messages" />
      <Stat
        label="Deliveries"
        value={number(totals.deliveries)}
        hint="created, replays included"
        testId="total-deliveries"
      />
      <Stat label="Succeeded" value={number(totals.succeeded)} hint="deliveries finished" testId="total-succeeded" />
      <Stat label="Failures" value={number(totals.failures)} hint="failed or expired" testId="total-failures" />
      <Stat
        label="Success rate"
        value={totals.successRate === null ? 'none finished' : `${totals.successRate}%`}
        hint="of the finished deliveries"
        testId="total-success-rate"
      />
      <Stat
        label="Queue now"
        value={number(queueDepth)}
        hint={queueDepth === 0 ? 'nothing pending' : `oldest due for ${formatAge(oldestDueAgeSeconds)}`}
        testId="queue-depth-now"
      />
    </SimpleGrid>
  );
}
