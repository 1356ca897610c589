import { Badge, Group, Stack, Text, Title } from '@mantine/core';
import Link from 'next/link';
import { toActionResult } from '@/lib/console-api.server';
import { listHref, searchParam } from '@/lib/list-href';
import { CopyableId } from '@/components/copyable-id';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { Pager } from '@/components/pager';
import { listEndpoints } from '../../../endpoints/endpoint.api';
import { toEndpointRow } from '../../../endpoints/endpoint-row';
import { EndpointsTable } from '../../../endpoints/endpoints-table';
import { NewEndpointButton } from '../../../endpoints/new-endpoint-button';
import { getTenant } from '../../tenant.api';
import { listTenantOptions } from '../../tenant-options';

export const metadata = { title: 'Endpoints · Webhook console' };

interface TenantEndpointsPageProps {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ after?: string | string[] }>;
}

export default async function TenantEndpointsPage({ params, searchParams }: TenantEndpointsPageProps) {
  const { id } = await params;
  const after = searchParam((await searchParams).after);
  const path = `/tenants/${encodeURIComponent(id)}/endpoints`;
  const tenant = await toActionResult(() => getTenant(id));
  if (!tenant.ok) return <LoadError error={tenant.error} resetHref="/tenants" title="Could not load this tenant" />;
  const active = tenant.data.status === 'active';
  const [page, tenants] = await Promise.all([
    toActionResult(() => listEndpoints({ tenantId: id, after: after || null })),
    active ? toActionResult(listTenantOptions) : null,
  ]);

  return (
    <Stack>
      <PageBreadcrumbs crumbs={[{ label: 'Tenants', href: '/tenants' }, { label: tenant.data.name }]} />
      <Group justify="space-between" align="flex-end">
        <div>
          <Group gap="xs">
            <Title order={1} size="h2">
              Endpoints
            </Title>
            {!active && (
              <Badge color="red" variant="light">
                tenant {tenant.data.status}
              </Badge>
            )}
          </Group>
          <Text c="dimmed" size="sm">
            Where webhooks for {tenant.data.name} ({tenant.data.externalId}) are delivered. Oldest first. Webhooks it
            receives from other providers come in through its{' '}
            <Link href={listHref('/sources', { tenant: tenant.data.id })}>sources</Link>.
          </Text>
          <CopyableId id={tenant.data.id} label={`tenant ${tenant.data.name}`} />
        </div>
        {tenants?.ok && <NewEndpointButton tenantId={id} tenants={tenants.data} />}
      </Group>
      {!page.ok && <LoadError error={page.error} resetHref={path} />}
      {page.ok && (
        <>
          <EndpointsTable endpoints={page.data.nodes.map(toEndpointRow)} />
          <Pager
            shown={page.data.nodes.length}
            firstHref={after ? path : null}
            nextHref={page.data.nextCursor ? listHref(path, { after: page.data.nextCursor }) : null}
          />
        </>
      )}
    </Stack>
  );
}
