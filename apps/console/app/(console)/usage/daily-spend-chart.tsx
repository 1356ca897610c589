'use client';

import { BarChart } from '@mantine/charts';
import { CHART_HEIGHT, dayAxis } from '../dashboard/dashboard-charts';
import type { DailySpend } from './usage.types';

/** What the team's keys were charged each UTC day of the month, in USD, from the billing record. */
export function DailySpendChart({ days }: { days: readonly DailySpend[] }) {
  const data = days.map((day) => ({ day: day.day.slice(5), usd: Number(day.totalUsd) }));
  return (
    <BarChart
      h={CHART_HEIGHT}
      data={data}
      dataKey="day"
      series={[{ name: 'usd', label: 'Spend (USD)', color: 'grape.6' }]}
      valueFormatter={(value) => `${value} USD`}
      xAxisProps={dayAxis(data.map((point) => point.day))}
    />
  );
}
