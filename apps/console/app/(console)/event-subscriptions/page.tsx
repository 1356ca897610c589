import { Group, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listAllEnvironments } from '../feature-flags/flag.api';
import { NewSubscriptionButton } from './new-subscription-button';
import { SubscriptionsTable } from './subscriptions-table';
import { listSubscribableEvents, listSubscriptions } from './subscription.api';

export const metadata = { title: 'Event subscriptions · Webhook console' };

/** The team's subscriptions to platform events (feature flag changes), oldest first. */
export default async function EventSubscriptionsPage({
  searchParams,
}: {
  searchParams: Promise<{ after?: string | string[] }>;
}) {
  const after = searchParam((await searchParams).after);
  const [page, environments, events] = await Promise.all([
    toActionResult(() => listSubscriptions(after || null)),
    toActionResult(listAllEnvironments),
    toActionResult(listSubscribableEvents),
  ]);
  const names = new Map(environments.ok ? environments.data.map((e) => [e.id, e.name]) : []);
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            Event subscriptions
          </Title>
          <Text c="dimmed" size="sm">
            Receivers of the platform&apos;s own events: every committed feature flag change, signed (Svc-Signature),
            delivered in commit order per subscription, retried, kept 30 days. At most 20 enabled per team.
          </Text>
        </div>
        {environments.ok && events.ok && (
          <NewSubscriptionButton
            environments={environments.data.map((e) => ({ id: e.id, name: e.name }))}
            events={events.data}
          />
        )}
      </Group>
      {!environments.ok && <LoadError error={environments.error} resetHref="/event-subscriptions" />}
      {!page.ok && <LoadError error={page.error} resetHref="/event-subscriptions" />}
      {page.ok && (
        <>
          <SubscriptionsTable subscriptions={page.data.nodes} environmentNames={names} />
          <Pager
            shown={page.data.nodes.length}
            firstHref={after ? '/event-subscriptions' : null}
            nextHref={page.data.nextCursor ? listHref('/event-subscriptions', { after: page.data.nextCursor }) : null}
          />
        </>
      )}
    </Stack>
  );
}
