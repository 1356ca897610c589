import { Stack } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { getTenant } from '../../tenants/tenant.api';
import { getMessage } from '../message.api';
import { MessageDetail } from '../message-detail';

export const metadata = { title: 'Message · Webhook console' };

export default async function MessagePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const loaded = await toActionResult(() => getMessage(id));
  if (!loaded.ok) return <LoadError error={loaded.error} resetHref="/messages" title="Could not load this message" />;
  const tenant = await toActionResult(() => getTenant(loaded.data.tenantId));
  return (
    <Stack>
      <PageBreadcrumbs crumbs={[{ label: 'Messages', href: '/messages' }, { label: loaded.data.id }]} />
      <MessageDetail initial={loaded.data} tenantName={tenant.ok ? tenant.data.name : null} />
    </Stack>
  );
}
