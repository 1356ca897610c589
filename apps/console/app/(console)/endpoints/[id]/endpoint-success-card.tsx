'use client';

import Link from 'next/link';
import { Anchor, Group, Stack, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { listHref } from '@/lib/list-href';
import { totals, type Analytics } from '../../dashboard/analytics.types';
import { LazyOutcomeCharts } from '../../dashboard/lazy-dashboard-charts';

/** "3 succeeded, 1 failed or expired: 75% succeeded." for the window's finished deliveries. */
function summary(analytics: Analytics): string {
  const { succeeded, failures, successRate } = totals(analytics.rows);
  if (successRate === null) return 'No delivery to this endpoint finished in the last 24 hours.';
  return `${succeeded} succeeded, ${failures} failed or expired: ${successRate}% succeeded in the last 24 hours.`;
}

/** How the endpoint's deliveries ended over the last 24 hours, per hour: the dashboard's charts of this endpoint. */
export function EndpointSuccessCard({
  endpointId,
  analytics,
}: {
  endpointId: string;
  analytics: ActionResult<Analytics>;
}) {
  return (
    <Stack gap="xs" data-testid="endpoint-success">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2} size="h3">
            Success
          </Title>
          <Text size="sm" c="dimmed">
            Deliveries of this endpoint that finished in the last 24 hours, per hour (UTC); the counts trail by up to
            about a minute.
          </Text>
        </div>
        <Anchor component={Link} size="sm" href={listHref('/dashboard', { endpoint: endpointId })}>
          This endpoint on the dashboard
        </Anchor>
      </Group>
      {analytics.ok ? (
        <>
          <Text size="sm" data-testid="endpoint-success-summary">
            {summary(analytics.data)}
          </Text>
          <LazyOutcomeCharts rows={analytics.data.rows} bucket="hour" />
        </>
      ) : (
        <Text size="sm" c="red">
          Could not load the counts: {analytics.error.message}
        </Text>
      )}
    </Stack>
  );
}
