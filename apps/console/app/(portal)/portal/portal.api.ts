import 'server-only';
import { graphql } from '@/gql';
import type { ActionResult } from '@/lib/api-error';
import { portalAction, portalRequest } from '@/lib/portal.server';
import type {
  PortalContext,
  PortalDelivery,
  PortalEndpoint,
  PortalEndpointStream,
  PortalEventType,
  PortalMessage,
  PortalMessageContent,
  PortalPage,
} from './portal.types';

graphql(`
  fragment PortalEndpointFields on Endpoint {
    id
    deliveryMode
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
    publicKeys {
      publicKey
      expiresAt
    }
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
    sequence
    target {
      endpointName
      url
      urlRevision
      urlRecorded
    }
    attempts {
      nodes {
        id
        number
        trigger
        startedAt
        statusCode
        errorKind
        errorDetail {
          ...AttemptErrorDetailFields
        }
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
  query PortalEndpoints($after: String) {
    portalEndpoints(first: 50, after: $after) {
      nodes {
        ...PortalEndpointFields
      }
      nextCursor
    }
  }
`);

const PortalEndpointQuery = graphql(`
  query PortalEndpoint($id: ID!, $after: String) {
    portalEndpoint(id: $id) {
      ...PortalEndpointFields
    }
    portalDeliveries(endpointId: $id, first: 20, after: $after) {
      nodes {
        ...PortalDeliveryFields
      }
      nextCursor
    }
  }
`);

const PortalEndpointStreamQuery = graphql(`
  query PortalEndpointStream($id: ID!) {
    portalEndpointStream(endpointId: $id, first: 100) {
      streamUrl
      connections {
        id
        tokenId
        openedAt
        remoteAddress
        unacknowledged
      }
      tokens {
        nodes {
          id
          name
          createdAt
          lastUsedAt
        }
      }
    }
  }
`);

const PortalEventTypesQuery = graphql(`
  query PortalEventTypes($after: String) {
    portalEventTypes(first: 20, after: $after) {
      nodes {
        name
        description
        example
      }
      nextCursor
    }
  }
`);

const PortalEventTypeNamesQuery = graphql(`
  query PortalEventTypeNames {
    portalEventTypeNames
  }
`);

const PortalMessagesQuery = graphql(`
  query PortalMessages($after: String, $externalId: String, $eventType: String) {
    portalMessages(first: 50, after: $after, externalId: $externalId, eventType: $eventType) {
      nodes {
        id
        externalId
        eventType
        status
        createdAt
      }
      nextCursor
    }
  }
`);

const PortalMessageQuery = graphql(`
  query PortalMessage($id: ID!) {
    portalMessage(id: $id) {
      id
      externalId
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

/** One page of the tenant's endpoints (50), from `after` (a cursor of this list) or the first. */
export async function loadPortalEndpoints(after: string | null): Promise<ActionResult<PortalPage<PortalEndpoint>>> {
  return portalAction(async () => (await portalRequest(PortalEndpointsQuery, { after })).portalEndpoints);
}

/**
 * An endpoint and one page of its deliveries (20, newest first) from `after`, or the first. A cursor the API
 * refuses leaves the endpoint shown with the refusal where its deliveries go.
 */
export async function loadPortalEndpoint(
  id: string,
  after: string | null,
): Promise<{ endpoint: PortalEndpoint; deliveries: ActionResult<PortalPage<PortalDelivery>> }> {
  const answer = await portalAction(() => portalRequest(PortalEndpointQuery, { id, after }));
  if (answer.ok)
    return { endpoint: answer.data.portalEndpoint, deliveries: { ok: true, data: answer.data.portalDeliveries } };
  const first = await portalRequest(PortalEndpointQuery, { id, after: null });
  return { endpoint: first.portalEndpoint, deliveries: answer };
}

/** A stream endpoint's stream URL, open connections and tokens (an endpoint holds at most 50 tokens). */
export async function loadPortalEndpointStream(id: string): Promise<ActionResult<PortalEndpointStream>> {
  return portalAction(async () => (await portalRequest(PortalEndpointStreamQuery, { id })).portalEndpointStream);
}

/** One page of the event catalog (20, by name, with their examples), from `after` or the first. */
export async function loadPortalEventTypes(after: string | null): Promise<ActionResult<PortalPage<PortalEventType>>> {
  return portalAction(async () => (await portalRequest(PortalEventTypesQuery, { after })).portalEventTypes);
}

/** Every event type name the portal offers: what the endpoint forms choose from (no descriptions, no examples). */
export async function loadPortalEventTypeNames(): Promise<string[]> {
  return (await portalRequest(PortalEventTypeNamesQuery)).portalEventTypeNames;
}

/**
 * One page of the tenant's messages of the last 30 days (50, newest first), from `after` or the first; only those with
 * the external ID and event type asked for, when asked.
 */
export async function loadPortalMessages(
  after: string | null,
  search: { externalId?: string; eventType?: string } = {},
): Promise<ActionResult<PortalPage<PortalMessage>>> {
  const filters = Object.fromEntries(Object.entries(search).filter(([, value]) => value));
  return portalAction(async () => (await portalRequest(PortalMessagesQuery, { after, ...filters })).portalMessages);
}

export async function loadPortalMessage(id: string): Promise<PortalMessage> {
  return (await portalRequest(PortalMessageQuery, { id })).portalMessage;
}

/** A message by ID, or why not (not_found for an ID of no message of the tenant): the search by message ID. */
export async function findPortalMessage(id: string): Promise<ActionResult<PortalMessage>> {
  return portalAction(async () => (await portalRequest(PortalMessageQuery, { id })).portalMessage);
}

const PortalMessageContentQuery = graphql(`
  query PortalMessageContent($id: ID!) {
    portalMessageContent(id: $id) {
      contentType
      bytes
      text
    }
  }
`);

/** The message's payload as accepted, or why not (payload_expired after redaction or retention). */
export async function loadPortalMessageContent(id: string): Promise<ActionResult<PortalMessageContent>> {
  return portalAction(async () => (await portalRequest(PortalMessageContentQuery, { id })).portalMessageContent);
}
