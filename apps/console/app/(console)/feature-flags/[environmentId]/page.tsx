import { Group, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { CopyableId } from '@/components/copyable-id';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { Pager } from '@/components/pager';
import { getEnvironmentWithFlags } from '../flag.api';
import { FlagsTable } from './flags-table';

export const metadata = { title: 'Environment · Webhook console' };

interface EnvironmentPageProps {
  params: Promise<{ environmentId: string }>;
  searchParams: Promise<{ after?: string | string[] }>;
}

/** One environment's flags (key order): toggle, edit, delete, create. */
export default async function EnvironmentPage({ params, searchParams }: EnvironmentPageProps) {
  const { environmentId } = await params;
  const after = searchParam((await searchParams).after);
  const loaded = await toActionResult(() => getEnvironmentWithFlags(environmentId, after || null));
  if (!loaded.ok)
    return <LoadError error={loaded.error} resetHref="/feature-flags" title="Could not load this environment" />;
  const { environment, flags } = loaded.data;
  const path = `/feature-flags/${encodeURIComponent(environment.id)}`;
  return (
    <Stack>
      <PageBreadcrumbs crumbs={[{ label: 'Feature flags', href: '/feature-flags' }, { label: environment.name }]} />
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            {environment.name}
          </Title>
          <CopyableId id={environment.id} label={`environment ${environment.name}`} />
        </div>
        <Text data-testid="environment-revision">Revision {environment.revision}</Text>
      </Group>
      <FlagsTable environmentId={environment.id} flags={flags.nodes} />
      <Pager
        shown={flags.nodes.length}
        firstHref={after ? path : null}
        nextHref={flags.nextCursor ? listHref(path, { after: flags.nextCursor }) : null}
      />
    </Stack>
  );
}
