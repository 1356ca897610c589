import { Alert, Group, Stack, Text, Title } from '@mantine/core';
import Link from 'next/link';
import { fieldMessage } from '@/lib/api-error';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { ListFilter } from '@/components/list-filter';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import { getTenant, listTenants } from './tenant.api';
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
  const noMatch = page.ok && externalId !== '' && page.data.nodes.length === 0 && !after;
  // Pasting a tenant ID where the external ID belongs is the likely slip: find that tenant instead.
  const byTenantId =
    noMatch && externalId.startsWith('wdt_') ? await toActionResult(() => getTenant(externalId)) : null;

  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={1} size="h2">
            Tenants
          </Title>
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
      {noMatch && (
        <Alert color="yellow" title="No tenant has this external ID" maw={720}>
          <Text size="sm">
            No tenant of your team has the external ID “{externalId}”. External IDs are your own IDs for your customers
            and must match exactly, capitals included.
          </Text>
          {byTenantId?.ok && (
            <Text size="sm" mt="xs">
              “{externalId}” is the tenant ID of {byTenantId.data.name} (external ID {byTenantId.data.externalId}):{' '}
              <Link href={`/tenants/${encodeURIComponent(byTenantId.data.id)}/endpoints`}>open its endpoints</Link>.
            </Text>
          )}
        </Alert>
      )}
      {page.ok && (
        <>
          <TenantsTable
            tenants={page.data.nodes}
            emptyText={externalId ? `No tenant with the external ID ${externalId}.` : 'No tenants yet.'}
          />
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
