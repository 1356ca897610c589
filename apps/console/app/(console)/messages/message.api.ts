import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import type { EventTypeChoice, Message, PublishMessageInput } from './message.types';

const MESSAGE_FIELDS = `id tenantId eventType externalId origin sourceId status bodyBytes bodySha256 contentType
  deliverAt expiresAt retainedUntil contentAvailable
  deliveryCounts { scheduled queued inFlight retryWait succeeded failed expired canceled }
  price { ingestUnits deliveryUnits totalUsd rateVersion }
  redacted redactionStatus redactedAt metadata createdAt`;

export async function getMessage(id: string): Promise<Message> {
  const data = await consoleRequest<{ message: Message }>(
    `query Message($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`,
    { id },
  );
  return data.message;
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
