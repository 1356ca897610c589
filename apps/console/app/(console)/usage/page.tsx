import { Group, Stack, Text, Title } from '@mantine/core';
import type { ActionResult } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import type { AnalyticsRow } from '../dashboard/analytics.types';
import { getDailyActivity } from './daily-activity.api';
import { getUsage } from './usage.api';
import { billingMonth, isBillingMonth } from './usage.types';
import { MonthSelect } from './month-select';
import { UsageReport } from './usage-report';

export const metadata = { title: 'Usage · Webhook console' };

/** Spend per meter and per paying key in a billing month (the current one unless picked). */
export default async function UsagePage({ searchParams }: { searchParams: Promise<{ month?: string | string[] }> }) {
  const picked = searchParam((await searchParams).month).trim();
  const currentMonth = billingMonth(new Date());
  // A malformed month goes to the API as typed, which names the problem.
  const month = picked || currentMonth;
  const usage = await toActionResult(() => getUsage(picked || null));
  const daily: ActionResult<AnalyticsRow[]> = usage.ok
    ? await toActionResult(() => getDailyActivity(usage.data.period, new Date()))
    : usage;

  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            Usage
          </Title>
          <Text c="dimmed" size="sm">
            What the team was charged in a billing month (00:00 UTC of its first day to the next month), per meter and
            per paying key, with each key&apos;s monthly spending limit and what is left of it.
          </Text>
        </div>
        <MonthSelect key={month} month={isBillingMonth(month) ? month : currentMonth} currentMonth={currentMonth} />
      </Group>
      {usage.ok ? (
        <UsageReport usage={usage.data} daily={daily} />
      ) : (
        <LoadError error={usage.error} resetHref="/usage" title="Could not load the usage" />
      )}
    </Stack>
  );
}
