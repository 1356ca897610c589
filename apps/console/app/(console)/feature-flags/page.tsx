import Link from 'next/link';
import { Paper, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listEnvironments } from './flag.api';
import { EnvironmentsTable } from './environments-table';
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
        <Title order={1} size="h2">
          Feature flags
        </Title>
        <Text c="dimmed" size="sm">
          Environments and their flags. Every committed change raises the environment&apos;s revision and sends a
          feature_flags.flag.updated event to the <Link href="/event-subscriptions">event subscriptions</Link> of that
          environment.
        </Text>
      </div>
      <Paper withBorder p="md">
        <NewEnvironmentForm />
      </Paper>
      {!page.ok && <LoadError error={page.error} resetHref="/feature-flags" />}
      {page.ok && (
        <>
          <EnvironmentsTable environments={page.data.nodes} />
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
