import { Alert, Badge, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { formatTimestamp } from '@/lib/format';
import { listHref, searchParam } from '@/lib/list-href';
import { CopyableId } from '@/components/copyable-id';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { Pager } from '@/components/pager';
import { listAllEnvironments } from '../../feature-flags/flag.api';
import { getSubscriptionWithDeliveries, listSubscribableEvents } from '../subscription.api';
import { DISABLED_REASONS, FORMAT_LABELS } from '../subscription.types';
import { DeliveriesTable } from './deliveries-table';
import { SubscriptionActions } from './subscription-actions';

export const metadata = { title: 'Event subscription · Webhook console' };

interface SubscriptionPageProps {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ after?: string | string[] }>;
}

/** One subscription: its settings, actions, and delivery history (newest first, 30 days) with attempts. */
export default async function SubscriptionPage({ params, searchParams }: SubscriptionPageProps) {
  const { id } = await params;
  const after = searchParam((await searchParams).after);
  const [loaded, environments, events] = await Promise.all([
    toActionResult(() => getSubscriptionWithDeliveries(id, after || null)),
    toActionResult(listAllEnvironments),
    toActionResult(listSubscribableEvents),
  ]);
  if (!loaded.ok)
    return <LoadError error={loaded.error} resetHref="/event-subscriptions" title="Could not load this subscription" />;
  const { subscription, deliveries } = loaded.data;
  const names = new Map(environments.ok ? environments.data.map((e) => [e.id, e.name]) : []);
  const path = `/event-subscriptions/${encodeURIComponent(subscription.id)}`;
  return (
    <Stack>
      <PageBreadcrumbs
        crumbs={[{ label: 'Event subscriptions', href: '/event-subscriptions' }, { label: subscription.id }]}
      />
      <Group justify="space-between" align="flex-end">
        <div>
          <Group gap="xs">
            <Title order={1} size="h2">
              {subscription.description || 'Event subscription'}
            </Title>
            <Badge color={subscription.enabled ? 'green' : 'gray'}>
              {subscription.enabled ? 'enabled' : 'disabled'}
            </Badge>
          </Group>
          <CopyableId id={subscription.id} label="event subscription" />
        </div>
        {environments.ok && events.ok && (
          <SubscriptionActions
            subscription={subscription}
            environments={environments.data.map((e) => ({ id: e.id, name: e.name }))}
            events={events.data}
          />
        )}
      </Group>
      {!subscription.enabled && subscription.disabledReason && (
        <Alert color="yellow" title="Disabled">
          This subscription is disabled: {DISABLED_REASONS[subscription.disabledReason] ?? subscription.disabledReason}.
          Enable it to receive new events.
        </Alert>
      )}
      <Paper withBorder p="lg">
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <div>
            <Text size="sm" c="dimmed">
              URL
            </Text>
            <Text style={{ wordBreak: 'break-all' }}>{subscription.url}</Text>
          </div>
          <div>
            <Text size="sm" c="dimmed">
              Format
            </Text>
            <Text>{FORMAT_LABELS[subscription.format] ?? subscription.format}</Text>
          </div>
          <div>
            <Text size="sm" c="dimmed">
              Events
            </Text>
            <Text>{subscription.events.join(', ')}</Text>
          </div>
          <div>
            <Text size="sm" c="dimmed">
              Environments
            </Text>
            <Text>{subscription.environmentIds.map((e) => names.get(e) ?? e).join(', ')}</Text>
          </div>
          <div>
            <Text size="sm" c="dimmed">
              Version
            </Text>
            <Text>{subscription.version}</Text>
          </div>
          <div>
            <Text size="sm" c="dimmed">
              Previous secret
            </Text>
            <Text>
              {subscription.secretRotationEndsAt
                ? `signs until ${formatTimestamp(subscription.secretRotationEndsAt)}`
                : 'none (one secret signs)'}
            </Text>
          </div>
        </SimpleGrid>
      </Paper>
      <Paper withBorder p="lg">
        <Stack>
          <Title order={2} size="h3">
            Deliveries
          </Title>
          <Text size="sm" c="dimmed">
            Newest first, 30 days. Events go in commit order; a failing one holds later ones back for at most 24 hours.
            Retry sends the original event again, once, outside the order.
          </Text>
          <DeliveriesTable subscriptionId={subscription.id} deliveries={deliveries.nodes} />
          <Pager
            shown={deliveries.nodes.length}
            firstHref={after ? path : null}
            nextHref={deliveries.nextCursor ? listHref(path, { after: deliveries.nextCursor }) : null}
          />
        </Stack>
      </Paper>
    </Stack>
  );
}
