import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import { ATTEMPT_FIELDS, DELIVERY_FIELDS } from '../deliveries/delivery.api';
import type { DeliveryWithAttempts } from '../deliveries/delivery.types';
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

export const MESSAGE_FIELDS = `id tenantId eventType externalId origin sourceId status bodyBytes bodySha256 contentType
  deliverAt expiresAt retainedUntil contentAvailable
  deliveryCounts { scheduled queued inFlight retryWait succeeded failed expired canceled } repairedCount
  price { ingestUnits deliveryUnits totalUsd rateVersion }
  redacted redactionStatus redactedAt metadata createdAt`;

export async function getMessage(id: string): Promise<Message> {
  const data = await consoleRequest<{ message: Message }>(
    `query Message($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`,
    { id },
  );
  return data.message;
}

/**
 * Messages newest first within the window (the API's default window is the last 30 days); `after` must come from
 * a newest-first page (a cursor continues only its own order). The status filter is applied to each page after it
 * is read, so a page may be short, even empty, while later pages hold more.
 */
export async function listMessages(filters: Partial<MessageFilters>, after: string | null): Promise<MessagePage> {
  const data = await consoleRequest<{ messages: MessagePage }>(
    `query Messages($first: Int, $after: String, $createdAfter: DateTimeISO, $createdBefore: DateTimeISO,
        $tenantId: ID, $eventType: String, $sourceId: ID, $status: MessageStatus, $externalId: String,
        $order: ListOrder) {
      messages(first: $first, after: $after, createdAfter: $createdAfter, createdBefore: $createdBefore,
          tenantId: $tenantId, eventType: $eventType, sourceId: $sourceId, status: $status, externalId: $externalId,
          order: $order) {
        nodes { ${MESSAGE_FIELDS} } nextCursor
      }
    }`,
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
  const data = await consoleRequest<{ messageContent: MessageContent }>(
    `query MessageContent($id: ID!) { messageContent(id: $id) { contentType bytes bodyBase64 text } }`,
    { id },
  );
  return data.messageContent;
}

const DELIVERIES_PER_READ = 100;
/** Enough for a message fanned out to every endpoint of a tenant, with replays; past it the page says so. */
const DELIVERIES_CAP = 500;
/** A delivery makes at most 9 attempts, plus probes and retries now. */
const ATTEMPTS_PER_DELIVERY = 100;

type InspectionRead = {
  message: Message & { deliveries: { nodes: DeliveryWithAttempts[]; nextCursor: string | null } };
};

/** The message with all its deliveries (every generation) and their attempts, in as few requests as it takes. */
export async function getMessageInspection(id: string): Promise<MessageInspection> {
  const read = (after: string | null, withMessage: boolean) =>
    consoleRequest<InspectionRead>(
      `query MessageInspection($id: ID!, $first: Int, $after: String, $attempts: Int) {
        message(id: $id) {
          ${withMessage ? MESSAGE_FIELDS : 'id'}
          deliveries(first: $first, after: $after) {
            nodes { ${DELIVERY_FIELDS} attempts(first: $attempts) { nodes { ${ATTEMPT_FIELDS} } nextCursor } }
            nextCursor
          }
        }
      }`,
      { id, first: DELIVERIES_PER_READ, attempts: ATTEMPTS_PER_DELIVERY, ...(after ? { after } : {}) },
    );
  const first = await read(null, true);
  const { deliveries: firstPage, ...message } = first.message;
  const deliveries = [...firstPage.nodes];
  let after = firstPage.nextCursor;
  while (after !== null && deliveries.length < DELIVERIES_CAP) {
    const next = await read(after, false);
    deliveries.push(...next.message.deliveries.nodes);
    after = next.message.deliveries.nextCursor;
  }
  return { message, deliveries, deliveriesComplete: after === null };
}

/** Cancels the pending original deliveries; in-flight attempts finish, nothing is refunded. */
export async function cancelMessage(id: string, idempotencyKey: string | null): Promise<CancelMessageResult> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ cancelMessage: CancelMessageResult }>(
    `mutation CancelMessage($id: ID!${idem.declaration}) {
      cancelMessage(id: $id${idem.argument}) { messageId canceledCount inFlightCount alreadyTerminalCount }
    }`,
    { id, ...idem.variables },
  );
  return data.cancelMessage;
}

/** Erases the body and every transformed copy for good and cancels every pending delivery, replays included. */
export async function redactMessage(id: string, idempotencyKey: string | null): Promise<RedactMessageResult> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ redactMessage: RedactMessageResult }>(
    `mutation RedactMessage($id: ID!${idem.declaration}) {
      redactMessage(id: $id${idem.argument}) { messageId status redactedAt }
    }`,
    { id, ...idem.variables },
  );
  return data.redactMessage;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot publish twice. */
export async function publishMessage(input: PublishMessageInput, idempotencyKey: string | null): Promise<Message> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ publishMessage: Message }>(
    `mutation PublishMessage($input: PublishMessageInput!${idem.declaration}) {
      publishMessage(input: $input${idem.argument}) { ${MESSAGE_FIELDS} }
    }`,
    {
      input: {
        tenantId: input.tenantId,
        eventType: input.eventType,
        payload: input.payload,
        ...(input.externalId ? { externalId: input.externalId } : {}),
        metadata: input.metadata,
      },
      ...idem.variables,
    },
  );
  return data.publishMessage;
}

/** A paid test message (svc.test) to one endpoint; `payload` is JSON text sent exactly as typed. */
export async function sendTestMessage(
  endpointId: string,
  payload: string,
  idempotencyKey: string | null,
): Promise<Message> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ sendTestMessage: Message }>(
    `mutation SendTestMessage($endpointId: ID!, $payload: String${idem.declaration}) {
      sendTestMessage(endpointId: $endpointId, payload: $payload${idem.argument}) { ${MESSAGE_FIELDS} }
    }`,
    { endpointId, payload, ...idem.variables },
  );
  return data.sendTestMessage;
}

/** At most the catalog's limit of event types (1,000), in pages of 200. */
const EVENT_TYPE_PAGE = 200;
const EVENT_TYPE_CAP = 1000;

/** The active event types a message can be published with, oldest first. */
export async function listEventTypeChoices(): Promise<EventTypeChoice[]> {
  const choices: EventTypeChoice[] = [];
  let after: string | null = null;
  do {
    const data: {
      eventTypes: { nodes: { name: string; description: string; archived: boolean }[]; nextCursor: string | null };
    } = await consoleRequest(
      `query EventTypeChoices($first: Int, $after: String) {
        eventTypes(first: $first, after: $after) { nodes { name description archived } nextCursor }
      }`,
      { first: EVENT_TYPE_PAGE, ...(after ? { after } : {}) },
    );
    for (const type of data.eventTypes.nodes)
      if (!type.archived) choices.push({ name: type.name, description: type.description });
    after = data.eventTypes.nextCursor;
  } while (after !== null && choices.length < EVENT_TYPE_CAP);
  return choices;
}
