import { Alert, Badge, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { listHref } from '@/lib/list-href';
import { CopyableId } from '@/components/copyable-id';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { listEventTypeChoices } from '../../messages/message.api';
import { getTenant } from '../../tenants/tenant.api';
import { getSourceDetail, listVerifierKinds } from '../source.api';
import { SourceStatusBadge } from '../source-status-badge';
import { RecentCapturesCard } from './recent-captures-card';
import { RecentRejectionsCard } from './recent-rejections-card';
import { SourceActions } from './source-actions';
import { SourceRotationCard } from './source-rotation-card';
import { SourceSettingsCard } from './source-settings-card';

export const metadata = { title: 'Source · Webhook console' };

export default async function SourcePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const loaded = await toActionResult(() => getSourceDetail(id));
  if (!loaded.ok) return <LoadError error={loaded.error} resetHref="/sources" title="Could not load this source" />;
  const { recentMessages, recentRejections, ...source } = loaded.data;
  const [tenant, kinds, eventTypes] = await Promise.all([
    toActionResult(() => getTenant(source.tenantId)),
    toActionResult(listVerifierKinds),
    toActionResult(listEventTypeChoices),
  ]);
  const kind = kinds.ok ? (kinds.data.find((candidate) => candidate.kind === source.kind) ?? null) : null;
  const tenantName = tenant.ok ? tenant.data.name : source.tenantId;

  return (
    <Stack>
      <PageBreadcrumbs
        crumbs={[
          { label: 'Sources', href: '/sources' },
          { label: `${tenantName} sources`, href: listHref('/sources', { tenant: source.tenantId }) },
          { label: source.name },
        ]}
      />
      <Group justify="space-between" align="flex-end">
        <div>
          <Group gap="xs">
            <Title order={1} size="h2">
              {source.name}
            </Title>
            <SourceStatusBadge status={source.status} />
            <Badge variant="outline" color="gray" tt="none" data-testid="source-kind">
              {source.kind}
            </Badge>
          </Group>
          <CopyableId id={source.id} label={`source ${source.name}`} />
          <Group gap={4} wrap="nowrap">
            <Text size="xs" c="dimmed">
              Tenant {tenant.ok ? tenant.data.name : ''}
            </Text>
            <CopyableId id={source.tenantId} label={`tenant ${tenantName}`} />
          </Group>
        </div>
        {eventTypes.ok && <SourceActions source={source} kind={kind} eventTypes={eventTypes.data} />}
      </Group>
      {!kinds.ok && (
        <LoadError error={kinds.error} resetHref={`/sources/${id}`} title="Could not load the verifier kinds" />
      )}
      {!eventTypes.ok && (
        <LoadError error={eventTypes.error} resetHref={`/sources/${id}`} title="Could not load the event types" />
      )}
      {source.status === 'paused' && (
        <Alert color="yellow" title="Paused" maw={720}>
          Its receive URL answers 503 with Retry-After: 60, so providers keep their requests and send them again later.
          Nothing is captured until it is resumed.
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Paper withBorder p="lg">
          <SourceSettingsCard source={source} />
        </Paper>
        <Paper withBorder p="lg">
          <SourceRotationCard source={source} />
        </Paper>
      </SimpleGrid>
      <Paper withBorder p="lg">
        <RecentCapturesCard sourceId={source.id} messages={recentMessages} />
      </Paper>
      <Paper withBorder p="lg">
        <RecentRejectionsCard sourceId={source.id} rejections={recentRejections} />
      </Paper>
    </Stack>
  );
}
