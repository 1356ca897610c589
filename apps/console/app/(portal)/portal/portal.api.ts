import 'server-only';
import { portalRequest } from '@/lib/portal.server';
import type { PortalContext, PortalDelivery, PortalEndpoint, PortalEventType, PortalMessage } from './portal.types';

const ENDPOINT = `id url name description events filter headers status disabledReason signatureScheme publicKey etag
  health { circuit consecutiveFailures lastSuccessAt lastFailureAt nextProbeAt }`;
const ATTEMPT = `id number trigger startedAt statusCode errorKind durationMs responseBody`;
const DELIVERY = `id messageId endpointId eventType kind status attemptCount lastStatusCode createdAt replayOf`;

export async function loadPortalContext(): Promise<PortalContext> {
  const data = await portalRequest<{ portalContext: PortalContext }>(`query PortalContext {
    portalContext { tenantName session { id capabilities eventTypes expiresAt spendingCapUsd spentUsd
      branding { displayName accentColor logoUrl } } }
  }`);
  return data.portalContext;
}

export async function loadPortalEndpoints(): Promise<PortalEndpoint[]> {
  const data = await portalRequest<{ portalEndpoints: { nodes: PortalEndpoint[] } }>(
    `query PortalEndpoints { portalEndpoints(first: 200) { nodes { ${ENDPOINT} } } }`,
  );
  return data.portalEndpoints.nodes;
}

export async function loadPortalEndpoint(
  id: string,
): Promise<{ endpoint: PortalEndpoint; deliveries: PortalDelivery[] }> {
  const data = await portalRequest<{
    portalEndpoint: PortalEndpoint;
    portalDeliveries: { nodes: PortalDelivery[] };
  }>(
    `query PortalEndpoint($id: ID!) {
      portalEndpoint(id: $id) { ${ENDPOINT} }
      portalDeliveries(endpointId: $id, first: 20) { nodes { ${DELIVERY} attempts { nodes { ${ATTEMPT} } } } }
    }`,
    { id },
  );
  return { endpoint: data.portalEndpoint, deliveries: data.portalDeliveries.nodes };
}

export async function loadPortalEventTypes(): Promise<PortalEventType[]> {
  const data = await portalRequest<{ portalEventTypes: PortalEventType[] }>(
    `query PortalEventTypes { portalEventTypes { name description example } }`,
  );
  return data.portalEventTypes;
}

export async function loadPortalMessages(): Promise<PortalMessage[]> {
  const data = await portalRequest<{ portalMessages: { nodes: PortalMessage[] } }>(
    `query PortalMessages { portalMessages(first: 100) { nodes { id eventType status createdAt } } }`,
  );
  return data.portalMessages.nodes;
}

export async function loadPortalMessage(id: string): Promise<PortalMessage> {
  const data = await portalRequest<{ portalMessage: PortalMessage }>(
    `query PortalMessage($id: ID!) {
      portalMessage(id: $id) { id eventType status createdAt
        deliveries(first: 50) { nodes { ${DELIVERY} attempts { nodes { ${ATTEMPT} } } } } }
    }`,
    { id },
  );
  return data.portalMessage;
}
