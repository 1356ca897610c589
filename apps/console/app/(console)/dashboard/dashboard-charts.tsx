'use client';

import type { ReactNode } from 'react';
import { AreaChart, BarChart, LineChart } from '@mantine/charts';
import { Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { successRate, type AnalyticsBucket, type AnalyticsRow } from './analytics.types';

/** A bucket's start as the axis shows it, in UTC like every time in the console. */
function bucketLabel(start: string, bucket: AnalyticsBucket): string {
  return bucket === 'hour' ? `${start.slice(5, 10)} ${start.slice(11, 13)}:00` : start.slice(5, 10);
}

interface ChartCardProps {
  title: string;
  description: string;
  testId: string;
  children: ReactNode;
}

function ChartCard({ title, description, testId, children }: ChartCardProps) {
  return (
    <Paper withBorder p="lg" data-testid={testId}>
      <Stack gap="xs">
        <div>
          <Title order={3}>{title}</Title>
          <Text size="sm" c="dimmed">
            {description}
          </Text>
        </div>
        {children}
      </Stack>
    </Paper>
  );
}

const CHART_HEIGHT = 240;

/** Messages, deliveries, outcomes, success rate and queue depth per bucket, oldest first. */
export function DashboardCharts({ rows, bucket }: { rows: AnalyticsRow[]; bucket: AnalyticsBucket }) {
  const per = bucket === 'hour' ? 'hour' : 'day';
  const data = rows.map((row) => ({
    label: bucketLabel(row.start, bucket),
    messages: row.admittedMessages,
    deliveries: row.deliveries,
    succeeded: row.succeeded,
    failed: row.failed,
    expired: row.expired,
    // A bucket where nothing finished has no rate: the line leaves a gap instead of dropping to 0.
    successRate: successRate(row.succeeded, row.failed + row.expired),
    queueDepth: row.queueDepth,
  }));
  const withDots = data.length <= 48;
  return (
    <SimpleGrid cols={{ base: 1, lg: 2 }}>
      <ChartCard
        title="Messages and deliveries"
        testId="chart-traffic"
        description={`Messages accepted and deliveries created per ${per} (replays count as deliveries when created).`}
      >
        <AreaChart
          h={CHART_HEIGHT}
          data={data}
          dataKey="label"
          series={[
            { name: 'messages', label: 'Messages', color: 'indigo.6' },
            { name: 'deliveries', label: 'Deliveries', color: 'teal.6' },
          ]}
          curveType="linear"
          withLegend
          withDots={withDots}
          yAxisProps={{ allowDecimals: false }}
        />
      </ChartCard>
      <ChartCard
        title="Outcomes"
        testId="chart-outcomes"
        description={`Deliveries that finished per ${per}: succeeded, failed and expired (the dead letters).`}
      >
        <BarChart
          h={CHART_HEIGHT}
          data={data}
          dataKey="label"
          type="stacked"
          series={[
            { name: 'succeeded', label: 'Succeeded', color: 'green.6' },
            { name: 'failed', label: 'Failed', color: 'red.6' },
            { name: 'expired', label: 'Expired', color: 'orange.5' },
          ]}
          withLegend
          yAxisProps={{ allowDecimals: false }}
        />
      </ChartCard>
      <ChartCard
        title="Success rate"
        testId="chart-success-rate"
        description={`Succeeded of the deliveries that finished, per ${per}; gaps where none finished.`}
      >
        <LineChart
          h={CHART_HEIGHT}
          data={data}
          dataKey="label"
          series={[{ name: 'successRate', label: 'Success rate', color: 'green.7' }]}
          curveType="linear"
          unit="%"
          yAxisProps={{ domain: [0, 100] }}
          connectNulls={false}
          withDots={withDots}
        />
      </ChartCard>
      <ChartCard
        title="Queue depth"
        testId="chart-queue-depth"
        description={`Pending deliveries (queued, in flight, waiting for a retry) at the last sample of each ${per}.`}
      >
        <AreaChart
          h={CHART_HEIGHT}
          data={data}
          dataKey="label"
          series={[{ name: 'queueDepth', label: 'Queue depth', color: 'blue.6' }]}
          curveType="step"
          withDots={withDots}
          yAxisProps={{ allowDecimals: false }}
        />
      </ChartCard>
    </SimpleGrid>
  );
}
