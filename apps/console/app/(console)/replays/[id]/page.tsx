import { Stack } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { getEndpoint } from '../../endpoints/endpoint.api';
import { getTenant } from '../../tenants/tenant.api';
import { getReplay } from '../replay.api';
import { ReplayDetail } from '../replay-detail';

export const metadata = { title: 'Replay · Webhook console' };

export default async function ReplayPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const loaded = await toActionResult(() => getReplay(id));
  if (!loaded.ok) return <LoadError error={loaded.error} resetHref="/replays" title="Could not load this replay" />;
  // A deleted endpoint cannot be read any more: the page shows its ID instead of its name.
  const [endpoint, tenant] = await Promise.all([
    toActionResult(() => getEndpoint(loaded.data.endpointId)),
    toActionResult(() => getTenant(loaded.data.tenantId)),
  ]);
  return (
    <Stack>
      <PageBreadcrumbs crumbs={[{ label: 'Replays', href: '/replays' }, { label: loaded.data.id }]} />
      <ReplayDetail
        initial={loaded.data}
        endpointName={endpoint.ok ? endpoint.data.name : null}
        tenantName={tenant.ok ? tenant.data.name : null}
      />
    </Stack>
  );
}
