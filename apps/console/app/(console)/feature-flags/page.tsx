import Link from 'next/link';
import { Anchor, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { formatTimestamp } from '@/lib/format';
import { listHref, searchParam } from '@/lib/list-href';
import { EmptyTableRow } from '@/components/empty-table-row';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listEnvironments } from './flag.api';
import { NewEnvironmentForm } from './new-environment-form';

export const metadata = { title: 'Feature flags · Webhook console' };

/** The team's feature-flag environments; each flag change in one raises its revision and writes an event. */
export default async function FeatureFlagsPage({
  searchParams,
}: {
  searchParams: Promise<{ after?: string | string[] }>;
}) {
  const after = searchParam((await searchParams).after);
  const page = await toActionResult(() => listEnvironments(after || null));
  return (
    <Stack>
      <div>
        <Title order={2}>Feature flags</Title>
        <Text c="dimmed" size="sm">
          Environments and their flags. Every committed change raises the environment&apos;s revision and sends a
          feature_flags.flag.updated event to the{' '}
          <Anchor component={Link} href="/event-subscriptions">
            event subscriptions
          </Anchor>{' '}
          of that environment.
        </Text>
      </div>
      <Paper withBorder p="md">
        <NewEnvironmentForm />
      </Paper>
      {!page.ok && <LoadError error={page.error} resetHref="/feature-flags" />}
      {page.ok && (
        <>
          <Table striped aria-label="Environments">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Environment</Table.Th>
                <Table.Th>ID</Table.Th>
                <Table.Th>Revision</Table.Th>
                <Table.Th>Last change</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.data.nodes.length === 0 && <EmptyTableRow columns={4}>No environments yet.</EmptyTableRow>}
              {page.data.nodes.map((environment) => (
                <Table.Tr key={environment.id}>
                  <Table.Td>
                    <Anchor component={Link} href={`/feature-flags/${encodeURIComponent(environment.id)}`}>
                      {environment.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Text ff="monospace" size="xs">
                      {environment.id}
                    </Text>
                  </Table.Td>
                  <Table.Td>{environment.revision}</Table.Td>
                  <Table.Td>{formatTimestamp(environment.updatedAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Pager
            shown={page.data.nodes.length}
            firstHref={after ? '/feature-flags' : null}
            nextHref={page.data.nextCursor ? listHref('/feature-flags', { after: page.data.nextCursor }) : null}
          />
        </>
      )}
    </Stack>
  );
}
