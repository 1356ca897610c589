'use client';

import { useEffect, useState } from 'react';
import { useRouter } from 'next/navigation';
import { Button, Card, Group, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { notifyApiError, notifySuccess } from '@/lib/notify';
import { formatTimestamp } from '@/lib/format';
import type { ActionResult } from '@/lib/api-error';
import { callAction, useIdempotencyKey } from '@/lib/idempotency-key';
import { StreamEndpointCard } from '@/components/stream-endpoint-card';
import {
  createPortalStreamToken,
  resumePortalEndpoint,
  rotatePortalSecret,
  sendPortalTest,
  setPortalEndpointStatus,
  revokePortalStreamToken,
  updatePortalEndpoint,
} from './actions';
import { CircuitBadge, StatusBadge } from './badges';
import { DeliveriesList } from './deliveries-list';
import { EndpointForm } from './endpoint-form';
import { PagedList } from './paged-list';
import type { PortalDelivery, PortalEndpoint, PortalEndpointStream, PortalPage } from './portal.types';
import { SecretOnce } from './secret-once';
import { VerifyPanel } from './verify-panel';

/** How often the page reads its deliveries again, so a test or a replay is seen arriving. */
const REFRESH_MS = 2_000;

interface EndpointDetailProps {
  endpoint: PortalEndpoint;
  /** One page of the endpoint's deliveries, newest first, or why it could not be read (a stale cursor). */
  deliveries: ActionResult<PortalPage<PortalDelivery>>;
  /** The cursor this page of deliveries was read from; null on the first page. */
  after: string | null;
  eventTypes: string[];
  manage: boolean;
  /** A stream endpoint's stream (null for push), or why it could not be read. */
  stream: ActionResult<PortalEndpointStream> | null;
}

/** One endpoint: its health and circuit, its actions, its settings, how to verify and its recent deliveries. */
export function EndpointDetail({ endpoint, deliveries, after, eventTypes, manage, stream }: EndpointDetailProps) {
  const router = useRouter();
  const [secret, setSecret] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const rotation = useIdempotencyKey();
  useEffect(() => {
    const timer = setInterval(() => router.refresh(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [router]);
  const act = async <T,>(work: () => Promise<ActionResult<T>>, done: string): Promise<T | null> => {
    const result = await work();
    if (!result.ok) {
      notifyApiError(result.error);
      return null;
    }
    notifySuccess(done);
    router.refresh();
    return result.data;
  };
  const { health } = endpoint;
  const page = `/portal/endpoints/${endpoint.id}`;
  const resumable = endpoint.status === 'disabled' || (endpoint.status === 'enabled' && health.circuit !== 'closed');
  return (
    <Stack>
      <Group justify="space-between">
        <Stack gap={2}>
          <Title order={2} data-testid="portal-endpoint-name">
            {endpoint.name}
          </Title>
          <Text ff="monospace" size="sm" data-testid="portal-endpoint-url">
            {endpoint.deliveryMode === 'stream' ? 'stream (your receiver connects)' : endpoint.url}
          </Text>
        </Stack>
        <Group gap="xs">
          <StatusBadge status={endpoint.status} />
          <CircuitBadge circuit={health.circuit} />
        </Group>
      </Group>
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        <Text size="sm">Consecutive failures: {health.consecutiveFailures}</Text>
        <Text size="sm">Last success: {health.lastSuccessAt ? formatTimestamp(health.lastSuccessAt) : '—'}</Text>
        <Text size="sm">Last failure: {health.lastFailureAt ? formatTimestamp(health.lastFailureAt) : '—'}</Text>
        <Text size="sm">Next probe: {health.nextProbeAt ? formatTimestamp(health.nextProbeAt) : '—'}</Text>
      </SimpleGrid>
      {endpoint.disabledReason ? <Text c="red">Disabled: {endpoint.disabledReason}</Text> : null}
      {manage ? (
        <Group>
          <Button onClick={() => void act(() => sendPortalTest(endpoint.id), 'Test event sent')}>
            Send test event
          </Button>
          {endpoint.status !== 'disabled' ? (
            <Button
              variant="light"
              onClick={() =>
                void act(
                  () =>
                    setPortalEndpointStatus(
                      endpoint.id,
                      endpoint.etag,
                      endpoint.status === 'paused' ? 'enabled' : 'paused',
                    ),
                  endpoint.status === 'paused' ? 'Endpoint enabled' : 'Endpoint paused',
                )
              }
            >
              {endpoint.status === 'paused' ? 'Enable' : 'Pause'}
            </Button>
          ) : null}
          {resumable ? (
            <Button
              variant="light"
              color="orange"
              onClick={() => void act(() => resumePortalEndpoint(endpoint.id, endpoint.etag), 'Endpoint resumed')}
            >
              Resume
            </Button>
          ) : null}
          <Button
            variant="light"
            color="red"
            onClick={() =>
              void act(async () => {
                const result = await callAction(() => rotatePortalSecret(endpoint.id, endpoint.etag, rotation.key));
                rotation.settle(result);
                return result;
              }, 'Secret rotated').then((shown) => {
                if (shown) setSecret(shown);
              })
            }
          >
            Rotate secret
          </Button>
          <Button variant="subtle" onClick={() => setEditing((value) => !value)}>
            {editing ? 'Close settings' : 'Edit settings'}
          </Button>
        </Group>
      ) : null}
      {secret ? <SecretOnce secret={secret} /> : null}
      {stream ? (
        <Card withBorder>
          {stream.ok ? (
            <StreamEndpointCard
              endpointId={endpoint.id}
              streamUrl={stream.data.streamUrl}
              connections={stream.data.connections}
              tokens={stream.data.tokens.nodes}
              manage={manage}
              actions={{ create: createPortalStreamToken, revoke: revokePortalStreamToken }}
            />
          ) : (
            <Text c="red">Could not read the stream: {stream.error.message}</Text>
          )}
        </Card>
      ) : null}
      {editing ? (
        <Card withBorder>
          <EndpointForm
            initial={{
              url: endpoint.url,
              name: endpoint.name,
              events: endpoint.events,
              filter: endpoint.filter ?? '',
              headerNames: endpoint.headers,
            }}
            eventTypes={[...new Set([...eventTypes, ...endpoint.events])]}
            withScheme={false}
            stream={endpoint.deliveryMode === 'stream'}
            submitLabel="Save"
            onSubmit={async (fields) => {
              const result = await updatePortalEndpoint(endpoint.id, endpoint.etag, fields);
              if (!result.ok) return result.error;
              notifySuccess('Endpoint saved');
              setEditing(false);
              router.refresh();
              return null;
            }}
          />
        </Card>
      ) : null}
      <Card withBorder>
        <VerifyPanel endpoint={endpoint} />
      </Card>
      <Title order={3}>Recent deliveries</Title>
      <PagedList page={deliveries} path={page} after={after}>
        {(nodes) => <DeliveriesList deliveries={nodes} manage={manage} onChanged={() => router.refresh()} />}
      </PagedList>
    </Stack>
  );
}
