import { Group, Stack, Text, Title } from '@mantine/core';
import { fieldMessage } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { ListFilter } from '@/components/list-filter';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { listTenants } from './tenant.api';
import { NewTenantButton } from './new-tenant-button';
import { TenantsTable } from './tenants-table';

export const metadata = { title: 'Tenants · Webhook console' };

interface TenantsPageProps {
  searchParams: Promise<{ after?: string | string[]; externalId?: string | string[] }>;
}

export default async function TenantsPage({ searchParams }: TenantsPageProps) {
  const params = await searchParams;
  const after = searchParam(params.after);
  const externalId = searchParam(params.externalId).trim();
  const page = await toActionResult(() => listTenants({ after: after || null, externalId: externalId || null }));
  const filterError = page.ok ? undefined : fieldMessage(page.error, 'external_id');

  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2}>Tenants</Title>
          <Text c="dimmed" size="sm">
            The customers you send webhooks for. Oldest first.
          </Text>
        </div>
        <NewTenantButton />
      </Group>
      <ListFilter
        action="/tenants"
        param="externalId"
        label="Find by external ID"
        value={externalId}
        error={filterError}
      />
      {!page.ok && filterError === undefined && <LoadError error={page.error} resetHref="/tenants" />}
      {page.ok && (
        <>
          <TenantsTable tenants={page.data.nodes} />
          <Pager
            shown={page.data.nodes.length}
            firstHref={after ? listHref('/tenants', { externalId }) : null}
            nextHref={page.data.nextCursor ? listHref('/tenants', { externalId, after: page.data.nextCursor }) : null}
          />
        </>
      )}
    </Stack>
  );
}
