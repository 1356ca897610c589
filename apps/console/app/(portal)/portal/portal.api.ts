import 'server-only';
import { graphql } from '@/gql';
import { portalRequest } from '@/lib/portal.server';
import type { PortalContext, PortalDelivery, PortalEndpoint, PortalEventType, PortalMessage } from './portal.types';

graphql(`
  fragment PortalEndpointFields on Endpoint {
    id
    url
    name
    description
    events
    filter
    headers
    status
    disabledReason
    signatureScheme
    publicKey
    etag
    health {
      circuit
      consecutiveFailures
      lastSuccessAt
      lastFailureAt
      nextProbeAt
    }
  }
`);

graphql(`
  fragment PortalDeliveryFields on Delivery {
    id
    messageId
    endpointId
    eventType
    kind
    status
    attemptCount
    lastStatusCode
    createdAt
    replayOf
    attempts {
      nodes {
        id
        number
        trigger
        startedAt
        statusCode
        errorKind
        durationMs
        responseBody
      }
    }
  }
`);

const PortalContextQuery = graphql(`
  query PortalContext {
    portalContext {
      tenantName
      session {
        id
        capabilities
        eventTypes
        expiresAt
        spendingCapUsd
        spentUsd
        branding {
          displayName
          accentColor
          logoUrl
        }
      }
    }
  }
`);

const PortalEndpointsQuery = graphql(`
  query PortalEndpoints {
    portalEndpoints(first: 200) {
      nodes {
        ...PortalEndpointFields
      }
    }
  }
`);

const PortalEndpointQuery = graphql(`
  query PortalEndpoint($id: ID!) {
    portalEndpoint(id: $id) {
      ...PortalEndpointFields
    }
    portalDeliveries(endpointId: $id, first: 20) {
      nodes {
        ...PortalDeliveryFields
      }
    }
  }
`);

const PortalEventTypesQuery = graphql(`
  query PortalEventTypes {
    portalEventTypes {
      name
      description
      example
    }
  }
`);

const PortalMessagesQuery = graphql(`
  query PortalMessages {
    portalMessages(first: 100) {
      nodes {
        id
        eventType
        status
        createdAt
      }
    }
  }
`);

const PortalMessageQuery = graphql(`
  query PortalMessage($id: ID!) {
    portalMessage(id: $id) {
      id
      eventType
      status
      createdAt
      deliveries(first: 50) {
        nodes {
          ...PortalDeliveryFields
        }
      }
    }
  }
`);

export async function loadPortalContext(): Promise<PortalContext> {
  return (await portalRequest(PortalContextQuery)).portalContext;
}

export async function loadPortalEndpoints(): Promise<PortalEndpoint[]> {
  return (await portalRequest(PortalEndpointsQuery)).portalEndpoints.nodes;
}

export async function loadPortalEndpoint(
  id: string,
): Promise<{ endpoint: PortalEndpoint; deliveries: PortalDelivery[] }> {
  const data = await portalRequest(PortalEndpointQuery, { id });
  return { endpoint: data.portalEndpoint, deliveries: data.portalDeliveries.nodes };
}

export async function loadPortalEventTypes(): Promise<PortalEventType[]> {
  return (await portalRequest(PortalEventTypesQuery)).portalEventTypes;
}

export async function loadPortalMessages(): Promise<PortalMessage[]> {
  return (await portalRequest(PortalMessagesQuery)).portalMessages.nodes;
}

export async function loadPortalMessage(id: string): Promise<PortalMessage> {
  return (await portalRequest(PortalMessageQuery, { id })).portalMessage;
}
