import { Paper, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { LoadError } from '@/components/load-error';
import { listTenantOptions } from '../tenants/tenant-options';
import { listEventTypeChoices } from './message.api';
import { OpenMessageForm } from './open-message-form';
import { PublishMessageForm } from './publish-message-form';

export const metadata = { title: 'Messages · Webhook console' };

export default async function MessagesPage() {
  const [tenants, eventTypes] = await Promise.all([
    toActionResult(() => listTenantOptions()),
    toActionResult(() => listEventTypeChoices()),
  ]);

  return (
    <Stack>
      <div>
        <Title order={2}>Messages</Title>
        <Text c="dimmed" size="sm">
          Publish an event to a tenant&apos;s endpoints and follow its deliveries, or open a message by its ID.
        </Text>
      </div>
      <Paper withBorder p="lg">
        <Stack gap="xs">
          <Title order={3}>Open a message</Title>
          <OpenMessageForm />
        </Stack>
      </Paper>
      <Paper withBorder p="lg">
        <Stack>
          <div>
            <Title order={3}>Publish a message</Title>
            <Text size="sm" c="dimmed">
              It goes to every matching endpoint of the tenant, exactly like POST /messages, and is charged the same.
            </Text>
          </div>
          {!tenants.ok && <LoadError error={tenants.error} resetHref="/messages" title="Could not load the tenants" />}
          {!eventTypes.ok && (
            <LoadError error={eventTypes.error} resetHref="/messages" title="Could not load the event types" />
          )}
          {tenants.ok && eventTypes.ok && <PublishMessageForm tenants={tenants.data} eventTypes={eventTypes.data} />}
        </Stack>
      </Paper>
    </Stack>
  );
}
