'use client';

import dynamic from 'next/dynamic';
import { Group, Paper, Progress, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { formatTimestamp } from '@/lib/format';
import { EmptyTableRow } from '@/components/empty-table-row';
import type { AnalyticsRow } from '../dashboard/analytics.types';
import { DrawingCharts } from '../dashboard/lazy-dashboard-charts';
import { busiestDay, METER_LABELS, spentShare, type KeyUsage, type MeterUsage, type Usage } from './usage.types';

/** The charts library loads after the page shows, as on the dashboard. */
const LazyDailyActivityChart = dynamic(
  () => import('./daily-activity-chart').then((module) => module.DailyActivityChart),
  { ssr: false, loading: DrawingCharts },
);
const LazyDailySpendChart = dynamic(() => import('./daily-spend-chart').then((module) => module.DailySpendChart), {
  ssr: false,
  loading: DrawingCharts,
});

/** The month's spend per UTC day from the billing record, and the day that cost the most (or today's, while open). */
function SpendPerDay({ usage }: { usage: Usage }) {
  const today = usage.status === 'open' ? usage.days.at(-1) : undefined;
  const busiest = busiestDay(usage.days);
  return (
    <Paper withBorder p="lg" data-testid="usage-daily-spend">
      <Stack gap="xs">
        <Title order={2} size="h3">
          Spend per day
        </Title>
        <Text size="sm" c="dimmed">
          What the team&apos;s keys were charged each UTC day of the month
          {usage.status === 'open' ? ', to today' : ''}, from the billing record: the days add up to the total above.
        </Text>
        <LazyDailySpendChart days={usage.days} />
        <Group gap="xl">
          {today ? (
            <Text size="sm" data-testid="usage-today">
              Today ({today.day}): {today.totalUsd} {usage.currency}
            </Text>
          ) : null}
          <Text size="sm" data-testid="usage-busiest-day">
            {busiest ? `Most in one day: ${busiest.totalUsd} ${usage.currency} on ${busiest.day}` : 'Nothing charged'}
          </Text>
        </Group>
      </Stack>
    </Paper>
  );
}

function DailyActivity({ daily }: { daily: ActionResult<AnalyticsRow[]> }) {
  return (
    <Paper withBorder p="lg" data-testid="usage-daily">
      <Stack gap="xs">
        <Title order={2} size="h3">
          Activity per day
        </Title>
        <Text size="sm" c="dimmed">
          Messages accepted and deliveries created each UTC day of the month: what the ingest and delivery meters charge
          for, at least one unit each (more for bodies over 64 KiB and 16 KiB). Counted by the analytics, which trail by
          about a minute; the spend above is the billing record.
        </Text>
        {daily.ok ? (
          <LazyDailyActivityChart rows={daily.data} />
        ) : (
          <Text size="sm" c="red">
            Could not load the daily counts: {daily.error.message}
          </Text>
        )}
      </Stack>
    </Paper>
  );
}

function MeterName({ meter }: { meter: MeterUsage }) {
  return (
    <>
      <Text size="sm">{METER_LABELS[meter.meter] ?? meter.meter}</Text>
      <Text size="xs" c="dimmed" ff="monospace">
        {meter.meter}
      </Text>
    </>
  );
}

function MetersTable({ usage }: { usage: Usage }) {
  return (
    <Table striped verticalSpacing="xs" aria-label="Spend per meter">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Meter</Table.Th>
          <Table.Th>Rate version</Table.Th>
          <Table.Th ta="right">Units</Table.Th>
          <Table.Th ta="right">USD</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {usage.meters.map((meter) => (
          <Table.Tr key={`${meter.meter}:${meter.rateVersion}`} data-meter={meter.meter}>
            <Table.Td>
              <MeterName meter={meter} />
            </Table.Td>
            <Table.Td>
              <Text size="sm" ff="monospace">
                {meter.rateVersion}
              </Text>
            </Table.Td>
            <Table.Td ta="right" data-testid="meter-units">
              {meter.units.toLocaleString('en-US')}
            </Table.Td>
            <Table.Td ta="right" data-testid="meter-usd">
              {meter.totalUsd}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function KeyLimit({ usageKey }: { usageKey: KeyUsage }) {
  if (usageKey.spendingLimitUsd === null)
    return (
      <Text size="sm" c="dimmed">
        No spending limit
      </Text>
    );
  const share = spentShare(usageKey.spentUsd, usageKey.spendingLimitUsd);
  return (
    <Stack gap={4}>
      <Progress
        value={share}
        color={share >= 100 ? 'red' : share >= 80 ? 'orange' : 'blue'}
        aria-label={`Share of the spending limit of ${usageKey.keyId} spent`}
      />
      <Text size="xs" c="dimmed">
        {`${usageKey.spentUsd} of ${usageKey.spendingLimitUsd} USD`}
      </Text>
    </Stack>
  );
}

function KeysTable({ usage }: { usage: Usage }) {
  return (
    <Table.ScrollContainer minWidth={760}>
      <Table striped verticalSpacing="sm" aria-label="Spend per key">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Key</Table.Th>
            <Table.Th ta="right">Spent (USD)</Table.Th>
            <Table.Th ta="right">Limit (USD)</Table.Th>
            <Table.Th ta="right">Remaining (USD)</Table.Th>
            <Table.Th w={220}>Of the limit</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {usage.keys.length === 0 && <EmptyTableRow columns={5}>No key paid for anything this month.</EmptyTableRow>}
          {usage.keys.map((key) => (
            <Table.Tr key={key.keyId} data-key-id={key.keyId}>
              <Table.Td>
                {key.label && (
                  <Text size="sm" fw={500}>
                    {key.label}
                  </Text>
                )}
                <Text size="sm" ff="monospace">
                  {key.keyId}
                </Text>
                <Text size="xs" c="dimmed">
                  {key.meters.length === 0
                    ? 'nothing charged'
                    : key.meters.map((meter) => `${meter.meter}: ${meter.units} units`).join(' · ')}
                </Text>
              </Table.Td>
              <Table.Td ta="right" data-testid="key-spent">
                {key.spentUsd}
              </Table.Td>
              <Table.Td ta="right" data-testid="key-limit">
                {key.spendingLimitUsd ?? 'none'}
              </Table.Td>
              <Table.Td ta="right" data-testid="key-remaining">
                {key.remainingUsd ?? 'no limit'}
              </Table.Td>
              <Table.Td>
                <KeyLimit usageKey={key} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** The month's total, its spend per meter, and per paying key with the key's limit and what is left of it. */
export function UsageReport({ usage, daily }: { usage: Usage; daily: ActionResult<AnalyticsRow[]> }) {
  const period = `${formatTimestamp(usage.period.start)} to ${formatTimestamp(usage.period.end)}`;
  return (
    <Stack>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Paper withBorder p="md">
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            Spent in {usage.month}
          </Text>
          <Text size="xl" fw={700} data-testid="usage-total">
            {`${usage.totalUsd} ${usage.currency}`}
          </Text>
        </Paper>
        <Paper withBorder p="md">
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            Month
          </Text>
          <Text size="sm" data-testid="usage-status">
            {usage.status === 'open'
              ? 'open: still taking charges'
              : `closed${usage.closedAt ? ` at ${formatTimestamp(usage.closedAt)}` : ''}: frozen`}
          </Text>
          <Text size="xs" c="dimmed">
            {period}; spending limits reset at its end
          </Text>
        </Paper>
        <Paper withBorder p="md">
          <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
            Rates
          </Text>
          <Text size="sm" ff="monospace">
            {usage.rateVersion}
          </Text>
          <Text size="xs" c="dimmed">
            {usage.status === 'open' ? 'in force now' : 'in force at the close'}
          </Text>
        </Paper>
      </SimpleGrid>
      <SpendPerDay usage={usage} />
      <DailyActivity daily={daily} />
      <Paper withBorder p="lg">
        <Stack gap="xs">
          <Title order={2} size="h3">
            Per meter
          </Title>
          <Text size="sm" c="dimmed">
            Every meter of the rates, 0 when unused; units priced at an earlier rate version follow on their own rows.
          </Text>
          <MetersTable usage={usage} />
        </Stack>
      </Paper>
      <Paper withBorder p="lg">
        <Stack gap="xs">
          <Group justify="space-between">
            <Title order={2} size="h3">
              Per key
            </Title>
          </Group>
          <Text size="sm" c="dimmed">
            Each secret key pays for what it sends. Keys not revoked are listed, and every key charged this month; a key
            whose spending limit is used up is refused more paid work until the month ends.
          </Text>
          <KeysTable usage={usage} />
        </Stack>
      </Paper>
    </Stack>
  );
}
