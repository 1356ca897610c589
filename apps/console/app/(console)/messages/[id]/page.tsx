import { Stack } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { getTenant } from '../../tenants/tenant.api';
import { getMessageContent, getMessageInspection } from '../message.api';
import { MessageDetail } from '../message-detail';

export const metadata = { title: 'Message · Webhook console' };

export default async function MessagePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const loaded = await toActionResult(() => getMessageInspection(id));
  if (!loaded.ok) return <LoadError error={loaded.error} resetHref="/messages" title="Could not load this message" />;
  const { tenantId } = loaded.data.message;
  // Each delivery names its endpoint and URL itself (Delivery.target), deleted endpoints too.
  const [tenant, content] = await Promise.all([
    toActionResult(() => getTenant(tenantId)),
    toActionResult(() => getMessageContent(id)),
  ]);
  return (
    <Stack>
      <PageBreadcrumbs crumbs={[{ label: 'Messages', href: '/messages' }, { label: loaded.data.message.id }]} />
      <MessageDetail initial={loaded.data} tenantName={tenant.ok ? tenant.data.name : null} content={content} />
    </Stack>
  );
}
