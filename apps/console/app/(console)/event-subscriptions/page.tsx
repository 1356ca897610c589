import Link from 'next/link';
import { Anchor, Badge, Group, Stack, Table, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { EmptyTableRow } from '@/components/empty-table-row';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listAllEnvironments } from '../feature-flags/flag.api';
import { NewSubscriptionButton } from './new-subscription-button';
import { listSubscribableEvents, listSubscriptions } from './subscription.api';
import { FORMAT_LABELS } from './subscription.types';

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
          <Title order={2}>Event subscriptions</Title>
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
          <Table striped aria-label="Event subscriptions">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>URL</Table.Th>
                <Table.Th>Format</Table.Th>
                <Table.Th>Events</Table.Th>
                <Table.Th>Environments</Table.Th>
                <Table.Th>Status</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.data.nodes.length === 0 && <EmptyTableRow columns={5}>No event subscriptions yet.</EmptyTableRow>}
              {page.data.nodes.map((subscription) => (
                <Table.Tr key={subscription.id}>
                  <Table.Td style={{ wordBreak: 'break-all' }}>
                    <Anchor component={Link} href={`/event-subscriptions/${encodeURIComponent(subscription.id)}`}>
                      {subscription.description || subscription.url}
                    </Anchor>
                    {subscription.description && (
                      <Text size="xs" c="dimmed">
                        {subscription.url}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{FORMAT_LABELS[subscription.format] ?? subscription.format}</Table.Td>
                  <Table.Td>{subscription.events.join(', ')}</Table.Td>
                  <Table.Td>{subscription.environmentIds.map((id) => names.get(id) ?? id).join(', ')}</Table.Td>
                  <Table.Td>
                    <Badge color={subscription.enabled ? 'green' : 'gray'}>
                      {subscription.enabled ? 'enabled' : 'disabled'}
                    </Badge>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
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
