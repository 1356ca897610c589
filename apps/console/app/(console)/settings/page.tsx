import { Badge, Group, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { LoadError } from '@/components/load-error';
import { getAnalytics } from '../dashboard/analytics.api';
import { getSettings } from './settings.api';
import { LimitsTable, type LimitUse } from './limits-table';
import { SettingsForm } from './settings-form';

export const metadata = { title: 'Settings · Webhook console' };

/** The limits whose current use the API reports: pending deliveries, the team's queue (GET /analytics). */
async function limitUse(): Promise<LimitUse> {
  const now = new Date();
  const queue = await toActionResult(() =>
    getAnalytics(
      { createdAfter: new Date(now.getTime() - 3_600_000).toISOString(), createdBefore: now.toISOString() },
      'hour',
      { tenantId: '', endpointId: '', sourceId: '' },
    ),
  );
  if (!queue.ok) return {};
  return {
    max_pending_deliveries: {
      value: queue.data.queueDepth,
      note: 'queued, in flight or waiting to retry; sampled every 20 s',
    },
  };
}

export default async function SettingsPage() {
  const [settings, use] = await Promise.all([toActionResult(getSettings), limitUse()]);
  if (!settings.ok)
    return <LoadError error={settings.error} resetHref="/settings" title="Could not load the settings" />;
  const { data } = settings;
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            Settings
          </Title>
          <Text c="dimmed" size="sm">
            Retention and logging for the whole team. Every change makes a new configuration version.
          </Text>
        </div>
        <Badge size="lg" variant="light" tt="none" data-testid="configuration-version">
          Configuration version {data.configurationVersion}
        </Badge>
      </Group>
      {/* Remount on a new version so the form shows what the API stored. */}
      <SettingsForm key={data.etag} settings={data} />
      <Title order={2} size="h3" mt="lg">
        Limits
      </Title>
      <Text c="dimmed" size="sm">
        What the service allows your team, with what it uses now where the API reports it. The API marks two rates not
        measured (as the spec states them); the service still holds to both, as their row says.
      </Text>
      <LimitsTable limits={data.limits} use={use} />
    </Stack>
  );
}
