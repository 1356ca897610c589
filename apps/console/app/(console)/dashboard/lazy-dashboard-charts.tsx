'use client';

import dynamic from 'next/dynamic';
import { Group, Loader, Text } from '@mantine/core';

export function DrawingCharts() {
  return (
    <Group gap="xs">
      <Loader size="xs" />
      <Text size="sm" c="dimmed">
        Drawing the charts…
      </Text>
    </Group>
  );
}

/**
 * The charts library is large: it loads after the page shows, so opening the dashboard (the console's home, where
 * signing in lands) waits for none of it. Charts draw in the browser only; their data is already on the page.
 */
export const LazyDashboardCharts = dynamic(
  () => import('./dashboard-charts').then((module) => module.DashboardCharts),
  { ssr: false, loading: DrawingCharts },
);

/** Outcomes and success rate of one scope (the endpoint page), loaded the same way. */
export const LazyOutcomeCharts = dynamic(() => import('./dashboard-charts').then((module) => module.OutcomeCharts), {
  ssr: false,
  loading: DrawingCharts,
});
