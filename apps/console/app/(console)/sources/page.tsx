import { Group, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { TenantFilter } from '@/components/tenant-filter';
import { listEventTypeChoices } from '../messages/message.api';
import { listTenantOptions } from '../tenants/tenant-options';
import { listSources, listVerifierKinds } from './source.api';
import { NewSourceButton } from './new-source-button';
import { SourcesTable } from './sources-table';

export const metadata = { title: 'Sources · Webhook console' };

interface SourcesPageProps {
  searchParams: Promise<{ after?: string | string[]; tenant?: string | string[] }>;
}

/** Every source of the team, or of the tenant picked by name. */
export default async function SourcesPage({ searchParams }: SourcesPageProps) {
  const params = await searchParams;
  const after = searchParam(params.after);
  const tenantId = searchParam(params.tenant).trim();
  const [page, tenants, kinds, eventTypes] = await Promise.all([
    toActionResult(() => listSources({ tenantId: tenantId || null, after: after || null })),
    toActionResult(listTenantOptions),
    toActionResult(listVerifierKinds),
    toActionResult(listEventTypeChoices),
  ]);
  const names = new Map(tenants.ok ? tenants.data.options.map((tenant) => [tenant.id, tenant.name]) : []);
  const picked = tenantId ? (names.get(tenantId) ?? tenantId) : null;

  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            Sources
          </Title>
          <Text c="dimmed" size="sm">
            Receive URLs that verify other providers&apos; webhooks and capture them as a tenant&apos;s messages, for
            every tenant or the one picked below. Oldest first.
          </Text>
        </div>
        {tenants.ok && kinds.ok && eventTypes.ok && (
          <NewSourceButton
            tenantId={tenantId || null}
            tenants={tenants.data}
            kinds={kinds.data}
            eventTypes={eventTypes.data}
          />
        )}
      </Group>
      {tenants.ok && <TenantFilter path="/sources" tenants={tenants.data} value={tenantId || null} />}
      {!tenants.ok && <LoadError error={tenants.error} resetHref="/sources" title="Could not load the tenants" />}
      {!kinds.ok && <LoadError error={kinds.error} resetHref="/sources" title="Could not load the verifier kinds" />}
      {!eventTypes.ok && (
        <LoadError error={eventTypes.error} resetHref="/sources" title="Could not load the event types" />
      )}
      {!page.ok && <LoadError error={page.error} resetHref="/sources" />}
      {page.ok && (
        <>
          <SourcesTable
            sources={page.data.nodes}
            tenantNames={names}
            emptyText={picked ? `${picked} has no sources yet.` : 'No sources yet.'}
          />
          <Pager
            shown={page.data.nodes.length}
            firstHref={after ? listHref('/sources', { tenant: tenantId }) : null}
            nextHref={
              page.data.nextCursor ? listHref('/sources', { tenant: tenantId, after: page.data.nextCursor }) : null
            }
          />
        </>
      )}
    </Stack>
  );
}
