'use client';

import type { ReactNode } from 'react';
import { AreaChart, BarChart, LineChart } from '@mantine/charts';
import { Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { successRate, type AnalyticsBucket, type AnalyticsRow } from './analytics.types';

/** A bucket's start as the axis shows it, in UTC like every time in the console. */
function bucketLabel(start: string, bucket: AnalyticsBucket): string {
  return bucket === 'hour' ? `${start.slice(5, 10)} ${start.slice(11, 13)}:00` : start.slice(5, 10);
}

/** At most this many labels on a time axis, so they never overlap. */
const MAX_TICKS = 6;

/**
 * The labels a time axis shows: evenly spaced, counted back from the newest bucket so the axis always reaches the
 * last one. Left to the chart, labels that would not fit were dropped from the end: the axis of a bar chart stopped
 * at 08:00 while its only bar stood at 12:00.
 */
export function axisTicks(labels: readonly string[], max = MAX_TICKS): string[] {
  const step = Math.max(1, Math.ceil(labels.length / max));
  const ticks: string[] = [];
  for (let index = labels.length - 1; index >= 0; index -= step) ticks.unshift(labels[index]!);
  return ticks;
}

export interface ChartPoint {
  label: string;
  messages: number;
  deliveries: number;
  succeeded: number;
  failed: number;
  expired: number;
  successRate: number | null;
  queueDepth: number;
}

export function chartPoints(rows: readonly AnalyticsRow[], bucket: AnalyticsBucket): ChartPoint[] {
  return rows.map((row) => ({
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
}

interface ChartCardProps {
  title: string;
  description: string;
  testId: string;
  children: ReactNode;
}

export function ChartCard({ title, description, testId, children }: ChartCardProps) {
  return (
    <Paper withBorder p="lg" data-testid={testId}>
      <Stack gap="xs">
        <div>
          <Title order={2} size="h3">
            {title}
          </Title>
          <Text size="sm" c="dimmed">
            {description}
          </Text>
        </div>
        {children}
      </Stack>
    </Paper>
  );
}

export const CHART_HEIGHT = 240;

/**
 * The time axis of every chart: its labels as axisTicks picks them, each one shown, with room on the right for the
 * newest one's label.
 */
function timeAxis(data: readonly ChartPoint[]) {
  return { ticks: axisTicks(data.map((point) => point.label)), interval: 0 as const, padding: { left: 0, right: 28 } };
}

/** The day axis of the usage page's per-day charts (labels MM-DD): at most 10 labels, the newest day's always shown. */
export function dayAxis(days: readonly string[]) {
  return { ticks: axisTicks(days, 10), interval: 0 as const };
}

/** Deliveries that finished per bucket, stacked by outcome. */
export function OutcomesChart({ data }: { data: ChartPoint[] }) {
  return (
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
      xAxisProps={timeAxis(data)}
      yAxisProps={{ allowDecimals: false }}
    />
  );
}

/** Succeeded of the deliveries that finished, per bucket; gaps where none finished. */
export function SuccessRateChart({ data }: { data: ChartPoint[] }) {
  return (
    <LineChart
      h={CHART_HEIGHT}
      data={data}
      dataKey="label"
      series={[{ name: 'successRate', label: 'Success rate', color: 'green.7' }]}
      curveType="linear"
      unit="%"
      xAxisProps={timeAxis(data)}
      yAxisProps={{ domain: [0, 100] }}
      connectNulls={false}
      withDots={data.length <= 48}
    />
  );
}

/** Outcomes and success rate side by side, for a page that shows one scope's deliveries among other things. */
export function OutcomeCharts({ rows, bucket }: { rows: AnalyticsRow[]; bucket: AnalyticsBucket }) {
  const data = chartPoints(rows, bucket);
  return (
    <SimpleGrid cols={{ base: 1, lg: 2 }}>
      <div data-testid="chart-outcomes">
        <Text size="sm" fw={500}>
          Outcomes
        </Text>
        <OutcomesChart data={data} />
      </div>
      <div data-testid="chart-success-rate">
        <Text size="sm" fw={500}>
          Success rate
        </Text>
        <SuccessRateChart data={data} />
      </div>
    </SimpleGrid>
  );
}

/** Messages, deliveries, outcomes, success rate and queue depth per bucket, oldest first. */
export function DashboardCharts({ rows, bucket }: { rows: AnalyticsRow[]; bucket: AnalyticsBucket }) {
  const per = bucket === 'hour' ? 'hour' : 'day';
  const data = chartPoints(rows, bucket);
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
          xAxisProps={timeAxis(data)}
          yAxisProps={{ allowDecimals: false }}
        />
      </ChartCard>
      <ChartCard
        title="Outcomes"
        testId="chart-outcomes"
        description={`Deliveries that finished per ${per}: succeeded, failed and expired (the dead letters).`}
      >
        <OutcomesChart data={data} />
      </ChartCard>
      <ChartCard
        title="Success rate"
        testId="chart-success-rate"
        description={`Succeeded of the deliveries that finished, per ${per}; gaps where none finished.`}
      >
        <SuccessRateChart data={data} />
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
          xAxisProps={timeAxis(data)}
          yAxisProps={{ allowDecimals: false }}
        />
      </ChartCard>
    </SimpleGrid>
  );
}
