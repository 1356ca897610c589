import { Badge, Group, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { LoadError } from '@/components/load-error';
import { getSettings } from './settings.api';
import { LimitsTable } from './limits-table';
import { SettingsForm } from './settings-form';

export const metadata = { title: 'Settings · Webhook console' };

export default async function SettingsPage() {
  const settings = await toActionResult(getSettings);
  if (!settings.ok)
    return <LoadError error={settings.error} resetHref="/settings" title="Could not load the settings" />;
  const { data } = settings;
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2}>Settings</Title>
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
      <Title order={3} mt="lg">
        Limits
      </Title>
      <Text c="dimmed" size="sm">
        What the service allows your team. A limit marked not measured is a stated figure the service does not measure
        itself.
      </Text>
      <LimitsTable limits={data.limits} />
    </Stack>
  );
}
