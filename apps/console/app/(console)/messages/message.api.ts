import 'server-only';
import { graphql } from '@/gql';
import type { EventTypeChoicesQuery as EventTypeChoicesData } from '@/gql/graphql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  MESSAGES_PAGE_SIZE,
  type CancelMessageResult,
  type EventTypeChoice,
  type Message,
  type MessageContent,
  type MessageFilters,
  type MessageInspection,
  type MessagePage,
  type PublishMessageInput,
  type RedactMessageResult,
} from './message.types';

graphql(`
  fragment MessageFields on Message {
    id
    tenantId
    eventType
    externalId
    origin
    sourceId
    status
    bodyBytes
    bodySha256
    contentType
    deliverAt
    expiresAt
    retainedUntil
    contentAvailable
    deliveryCounts {
      scheduled
      queued
      inFlight
      retryWait
      succeeded
      failed
      expired
      canceled
    }
    repairedCount
    price {
      ingestUnits
      deliveryUnits
      totalUsd
      rateVersion
    }
    redacted
    redactionStatus
    redactedAt
    metadata
    createdAt
  }
`);

const MessageQuery = graphql(`
  query Message($id: ID!) {
    message(id: $id) {
      ...MessageFields
    }
  }
`);

const MessagesQuery = graphql(`
  query Messages(
    $first: Int
    $after: String
    $createdAfter: DateTimeISO
    $createdBefore: DateTimeISO
    $tenantId: ID
    $eventType: String
    $sourceId: ID
    $status: MessageStatus
    $externalId: String
    $order: ListOrder
  ) {
    messages(
      first: $first
      after: $after
      createdAfter: $createdAfter
      createdBefore: $createdBefore
      tenantId: $tenantId
      eventType: $eventType
      sourceId: $sourceId
      status: $status
      externalId: $externalId
      order: $order
    ) {
      nodes {
        ...MessageFields
      }
      nextCursor
    }
  }
`);

const MessageContentQuery = graphql(`
  query MessageContent($id: ID!) {
    messageContent(id: $id) {
      contentType
      bytes
      bodyBase64
      text
    }
  }
`);

const CancelMessageMutation = graphql(`
  mutation CancelMessage($id: ID!, $idempotencyKey: String) {
    cancelMessage(id: $id, idempotencyKey: $idempotencyKey) {
      messageId
      canceledCount
      inFlightCount
      alreadyTerminalCount
    }
  }
`);

const RedactMessageMutation = graphql(`
  mutation RedactMessage($id: ID!, $idempotencyKey: String) {
    redactMessage(id: $id, idempotencyKey: $idempotencyKey) {
      messageId
      status
      redactedAt
    }
  }
`);

const PublishMessageMutation = graphql(`
  mutation PublishMessage($input: PublishMessageInput!, $idempotencyKey: String) {
    publishMessage(input: $input, idempotencyKey: $idempotencyKey) {
      ...MessageFields
    }
  }
`);

const SendTestMessageMutation = graphql(`
  mutation SendTestMessage($endpointId: ID!, $payload: String, $idempotencyKey: String) {
    sendTestMessage(endpointId: $endpointId, payload: $payload, idempotencyKey: $idempotencyKey) {
      ...MessageFields
    }
  }
`);

export async function getMessage(id: string): Promise<Message> {
  const data = await consoleRequest(MessageQuery, { id });
  return data.message;
}

/**
 * Messages newest first within the window (the API's default window is the last 30 days); `after` must come from
 * a newest-first page (a cursor continues only its own order). The status filter is applied to each page after it
 * is read, so a page may be short, even empty, while later pages hold more.
 */
export async function listMessages(filters: Partial<MessageFilters>, after: string | null): Promise<MessagePage> {
  const data = await consoleRequest(
    MessagesQuery,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: MESSAGES_PAGE_SIZE,
      order: 'newest',
      ...(after ? { after } : {}),
      ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)),
    },
  );
  return data.messages;
}

/** The accepted bytes; the API answers payload_expired once they are redacted or past retention. */
export async function getMessageContent(id: string): Promise<MessageContent> {
  const data = await consoleRequest(MessageContentQuery, { id });
  return data.messageContent;
}

const DELIVERIES_PER_READ = 100;
/** Enough for a message fanned out to every endpoint of a tenant, with replays; past it the page says so. */
const DELIVERIES_CAP = 500;
/** A delivery makes at most 9 attempts, plus probes and retries now. */
const ATTEMPTS_PER_DELIVERY = 100;

const MessageInspectionQuery = graphql(`
  query MessageInspection($id: ID!, $first: Int, $attempts: Int) {
    message(id: $id) {
      ...MessageFields
      deliveries(first: $first) {
        ...InspectedDeliveries
      }
    }
  }
`);

const MessageDeliveriesQuery = graphql(`
  query MessageDeliveries($id: ID!, $first: Int, $after: String, $attempts: Int) {
    message(id: $id) {
      deliveries(first: $first, after: $after) {
        ...InspectedDeliveries
      }
    }
  }
`);

graphql(`
  fragment InspectedDeliveries on DeliveryConnection {
    nodes {
      ...DeliveryFields
      attempts(first: $attempts) {
        nodes {
          ...AttemptFields
        }
        nextCursor
      }
    }
    nextCursor
  }
`);

/** The message with all its deliveries (every generation) and their attempts, in as few requests as it takes. */
export async function getMessageInspection(id: string): Promise<MessageInspection> {
  const page = { first: DELIVERIES_PER_READ, attempts: ATTEMPTS_PER_DELIVERY };
  const first = await consoleRequest(MessageInspectionQuery, { id, ...page });
  const { deliveries: firstPage, ...message } = first.message;
  const deliveries = [...firstPage.nodes];
  let after = firstPage.nextCursor;
  while (after !== null && deliveries.length < DELIVERIES_CAP) {
    const next = await consoleRequest(MessageDeliveriesQuery, { id, ...page, after });
    deliveries.push(...next.message.deliveries.nodes);
    after = next.message.deliveries.nextCursor;
  }
  return { message, deliveries, deliveriesComplete: after === null };
}

/** Cancels the pending original deliveries; in-flight attempts finish, nothing is refunded. */
export async function cancelMessage(id: string, idempotencyKey: string | null): Promise<CancelMessageResult> {
  const data = await consoleRequest(CancelMessageMutation, { id, ...idempotencyVariable(idempotencyKey) });
  return data.cancelMessage;
}

/** Erases the body and every transformed copy for good and cancels every pending delivery, replays included. */
export async function redactMessage(id: string, idempotencyKey: string | null): Promise<RedactMessageResult> {
  const data = await consoleRequest(RedactMessageMutation, { id, ...idempotencyVariable(idempotencyKey) });
  return data.redactMessage;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot publish twice. */
export async function publishMessage(input: PublishMessageInput, idempotencyKey: string | null): Promise<Message> {
  const data = await consoleRequest(PublishMessageMutation, {
    input: {
      tenantId: input.tenantId,
      eventType: input.eventType,
      payload: input.payload,
      ...(input.externalId ? { externalId: input.externalId } : {}),
      metadata: input.metadata,
    },
    ...idempotencyVariable(idempotencyKey),
  });
  return data.publishMessage;
}

/** A paid test message (svc.test) to one endpoint; `payload` is JSON text sent exactly as typed. */
export async function sendTestMessage(
  endpointId: string,
  payload: string,
  idempotencyKey: string | null,
): Promise<Message> {
  const data = await consoleRequest(SendTestMessageMutation, {
    endpointId,
    payload,
    ...idempotencyVariable(idempotencyKey),
  });
  return data.sendTestMessage;
}

/** At most the catalog's limit of event types (1,000), in pages of 200. */
const EVENT_TYPE_PAGE = 200;
const EVENT_TYPE_CAP = 1000;

const EventTypeChoicesQuery = graphql(`
  query EventTypeChoices($first: Int, $after: String) {
    eventTypes(first: $first, after: $after) {
      nodes {
        name
        description
        archived
      }
      nextCursor
    }
  }
`);

/** The active event types a message can be published with, oldest first. */
export async function listEventTypeChoices(): Promise<EventTypeChoice[]> {
  const choices: EventTypeChoice[] = [];
  let after: string | null = null;
  do {
    const data: EventTypeChoicesData = await consoleRequest(EventTypeChoicesQuery, {
      first: EVENT_TYPE_PAGE,
      ...(after ? { after } : {}),
    });
    for (const type of data.eventTypes.nodes)
      if (!type.archived) choices.push({ name: type.name, description: type.description });
    after = data.eventTypes.nextCursor;
  } while (after !== null && choices.length < EVENT_TYPE_CAP);
  return choices;
}
