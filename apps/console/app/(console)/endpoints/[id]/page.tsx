import { Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { toActionResult } from '@/lib/console-api.server';
import { CopyableId } from '@/components/copyable-id';
import { LoadError } from '@/components/load-error';
import { PageBreadcrumbs } from '@/components/page-breadcrumbs';
import { getTenant } from '../../tenants/tenant.api';
import { listRecentEndpointDeliveries } from '../../deliveries/delivery.api';
import { listNewestEndpointReplays } from '../../replays/replay.api';
import { listEvents } from '../../events/event.api';
import { getAnalytics } from '../../dashboard/analytics.api';
import { windowBounds } from '../../dashboard/analytics.types';
import { getEndpoint } from '../endpoint.api';
import { getEndpointStream } from '../stream.api';
import { HealthBadge } from '../health-badge';
import { StatusBadge } from '../status-badge';
import { CircuitHistoryCard } from './circuit-history-card';
import { EndpointActions } from './endpoint-actions';
import { EndpointHealthCard } from './endpoint-health-card';
import { EndpointReplaysCard } from './endpoint-replays-card';
import { EndpointRulesCard } from './endpoint-rules-card';
import { EndpointSettingsCard } from './endpoint-settings-card';
import { EndpointSigningCard } from './endpoint-signing-card';
import { StreamEndpointCard } from '@/components/stream-endpoint-card';
import { createStreamTokenAction, revokeStreamTokenAction } from '../stream-actions';
import { EndpointSuccessCard } from './endpoint-success-card';
import { PreviewPanel } from './preview-panel';
import { previewSample } from './preview-sample';
import { RecentDeliveriesCard } from './recent-deliveries-card';

export const metadata = { title: 'Endpoint · Webhook console' };

/** How many of the endpoint's newest deliveries its page lists. */
const RECENT_DELIVERIES = 20;
/** How many of the endpoint's newest replays its page lists. */
const NEWEST_REPLAYS = 10;

export default async function EndpointPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const loaded = await toActionResult(() => getEndpoint(id));
  if (!loaded.ok) return <LoadError error={loaded.error} resetHref="/tenants" title="Could not load this endpoint" />;
  const endpoint = loaded.data;
  const [tenant, sample, recent, replays, circuit, analytics, stream] = await Promise.all([
    toActionResult(() => getTenant(endpoint.tenantId)),
    previewSample(endpoint.events),
    toActionResult(() => listRecentEndpointDeliveries(endpoint.id, RECENT_DELIVERIES)),
    toActionResult(() => listNewestEndpointReplays(endpoint.id, NEWEST_REPLAYS)),
    // Events about the endpoint itself (its circuit opening, recovering, being disabled) name it as their resource.
    toActionResult(() => listEvents({ resourceId: endpoint.id }, null, 'newest')),
    toActionResult(() =>
      getAnalytics(windowBounds('24h', new Date()), 'hour', { tenantId: '', sourceId: '', endpointId: endpoint.id }),
    ),
    endpoint.deliveryMode === 'stream' ? toActionResult(() => getEndpointStream(endpoint.id)) : null,
  ]);
  const endpointsHref = `/tenants/${encodeURIComponent(endpoint.tenantId)}/endpoints`;

  return (
    <Stack>
      <PageBreadcrumbs
        crumbs={[
          { label: 'Tenants', href: '/tenants' },
          { label: tenant.ok ? `${tenant.data.name} endpoints` : 'Endpoints', href: endpointsHref },
          { label: endpoint.name },
        ]}
      />
      <Group justify="space-between" align="flex-end">
        <div>
          <Group gap="xs">
            <Title order={1} size="h2">
              {endpoint.name}
            </Title>
            <StatusBadge endpoint={endpoint} />
            <HealthBadge health={endpoint.health} />
          </Group>
          <CopyableId id={endpoint.id} label={`endpoint ${endpoint.name}`} />
          <Group gap={4} wrap="nowrap">
            <Text size="xs" c="dimmed">
              Tenant {tenant.ok ? tenant.data.name : ''}
            </Text>
            <CopyableId id={endpoint.tenantId} label={`tenant ${tenant.ok ? tenant.data.name : endpoint.tenantId}`} />
          </Group>
        </div>
        <EndpointActions endpoint={endpoint} />
      </Group>
      {stream && (
        <Paper withBorder p="lg">
          {stream.ok ? (
            <StreamEndpointCard
              endpointId={endpoint.id}
              streamUrl={stream.data.streamUrl ?? null}
              connections={stream.data.streamConnections}
              tokens={stream.data.streamTokens.nodes}
              manage
              actions={{ create: createStreamTokenAction, revoke: revokeStreamTokenAction }}
            />
          ) : (
            <LoadError
              error={stream.error}
              resetHref={`/endpoints/${encodeURIComponent(endpoint.id)}`}
              title="Could not load the stream"
            />
          )}
        </Paper>
      )}
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Paper withBorder p="lg">
          <EndpointSettingsCard endpoint={endpoint} />
        </Paper>
        <Paper withBorder p="lg">
          <EndpointHealthCard endpoint={endpoint} />
        </Paper>
        <Paper withBorder p="lg">
          <EndpointSigningCard endpoint={endpoint} />
        </Paper>
        <Paper withBorder p="lg">
          <CircuitHistoryCard events={circuit} />
        </Paper>
      </SimpleGrid>
      <Paper withBorder p="lg">
        <EndpointSuccessCard endpointId={endpoint.id} analytics={analytics} />
      </Paper>
      <Paper withBorder p="lg">
        <RecentDeliveriesCard endpointId={endpoint.id} recent={recent} />
      </Paper>
      <Paper withBorder p="lg">
        <EndpointReplaysCard endpointId={endpoint.id} endpointName={endpoint.name} replays={replays} />
      </Paper>
      <Paper withBorder p="lg">
        <EndpointRulesCard endpoint={endpoint} />
      </Paper>
      <PreviewPanel endpointId={endpoint.id} version={endpoint.version} sample={sample} />
    </Stack>
  );
}
