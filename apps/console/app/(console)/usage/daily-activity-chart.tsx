'use client';

import { BarChart } from '@mantine/charts';
import type { AnalyticsRow } from '../dashboard/analytics.types';
import { CHART_HEIGHT, dayAxis } from '../dashboard/dashboard-charts';

/** Messages accepted and deliveries created per UTC day, side by side. */
export function DailyActivityChart({ rows }: { rows: AnalyticsRow[] }) {
  const data = rows.map((row) => ({
    day: row.start.slice(5, 10),
    messages: row.admittedMessages,
    deliveries: row.deliveries,
  }));
  return (
    <BarChart
      h={CHART_HEIGHT}
      data={data}
      dataKey="day"
      series={[
        { name: 'messages', label: 'Messages accepted', color: 'indigo.6' },
        { name: 'deliveries', label: 'Deliveries created', color: 'teal.6' },
      ]}
      withLegend
      xAxisProps={dayAxis(data.map((point) => point.day))}
      yAxisProps={{ allowDecimals: false }}
    />
  );
}
