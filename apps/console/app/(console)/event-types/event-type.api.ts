import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import {
  EVENT_TYPES_PAGE_SIZE,
  type CreateEventTypeInput,
  type EventType,
  type EventTypeChanges,
  type EventTypePage,
} from './event-type.types';

const EVENT_TYPE_FIELDS = 'id name description example archived etag createdAt';

export async function listEventTypes(args: { after: string | null; name: string | null }): Promise<EventTypePage> {
  const data = await consoleRequest<{ eventTypes: EventTypePage }>(
    `query EventTypes($first: Int, $after: String, $name: String) {
      eventTypes(first: $first, after: $after, name: $name) { nodes { ${EVENT_TYPE_FIELDS} } nextCursor }
    }`,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: EVENT_TYPES_PAGE_SIZE,
      ...(args.after ? { after: args.after } : {}),
      ...(args.name ? { name: args.name } : {}),
    },
  );
  return data.eventTypes;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer is answered like the first. */
export async function createEventType(input: CreateEventTypeInput, idempotencyKey: string | null): Promise<EventType> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ createEventType: EventType }>(
    `mutation CreateEventType($input: CreateEventTypeInput!${idem.declaration}) {
      createEventType(input: $input${idem.argument}) { ${EVENT_TYPE_FIELDS} }
    }`,
    { input, ...idem.variables },
  );
  return data.createEventType;
}

export async function updateEventType(id: string, etag: string, input: EventTypeChanges): Promise<EventType> {
  const data = await consoleRequest<{ updateEventType: EventType }>(
    `mutation UpdateEventType($id: ID!, $etag: String!, $input: UpdateEventTypeInput!) {
      updateEventType(id: $id, etag: $etag, input: $input) { ${EVENT_TYPE_FIELDS} }
    }`,
    { id, etag, input },
  );
  return data.updateEventType;
}

export async function setEventTypeArchived(id: string, etag: string, archived: boolean): Promise<EventType> {
  const mutation = archived ? 'archiveEventType' : 'unarchiveEventType';
  const data = await consoleRequest<Record<typeof mutation, EventType>>(
    `mutation SetArchived($id: ID!, $etag: String!) { ${mutation}(id: $id, etag: $etag) { ${EVENT_TYPE_FIELDS} } }`,
    { id, etag },
  );
  return data[mutation];
}
