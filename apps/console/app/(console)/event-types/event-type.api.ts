import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  EVENT_TYPES_PAGE_SIZE,
  type CreateEventTypeInput,
  type EventType,
  type EventTypeChanges,
  type EventTypePage,
} from './event-type.types';

graphql(`
  fragment EventTypeFields on EventType {
    id
    name
    description
    example
    archived
    etag
    createdAt
  }
`);

const EventTypesQuery = graphql(`
  query EventTypes($first: Int, $after: String, $name: String) {
    eventTypes(first: $first, after: $after, name: $name) {
      nodes {
        ...EventTypeFields
      }
      nextCursor
    }
  }
`);

const CreateEventTypeMutation = graphql(`
  mutation CreateEventType($input: CreateEventTypeInput!, $idempotencyKey: String) {
    createEventType(input: $input, idempotencyKey: $idempotencyKey) {
      ...EventTypeFields
    }
  }
`);

const UpdateEventTypeMutation = graphql(`
  mutation UpdateEventType($id: ID!, $etag: String!, $input: UpdateEventTypeInput!) {
    updateEventType(id: $id, etag: $etag, input: $input) {
      ...EventTypeFields
    }
  }
`);

export async function listEventTypes(args: { after: string | null; name: string | null }): Promise<EventTypePage> {
  const data = await consoleRequest(
    EventTypesQuery,
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
  const data = await consoleRequest(CreateEventTypeMutation, { input, ...idempotencyVariable(idempotencyKey) });
  return data.createEventType;
}

export async function updateEventType(id: string, etag: string, input: EventTypeChanges): Promise<EventType> {
  const data = await consoleRequest(UpdateEventTypeMutation, { id, etag, input });
  return data.updateEventType;
}

const ArchiveEventTypeMutation = graphql(`
  mutation ArchiveEventType($id: ID!, $etag: String!) {
    archiveEventType(id: $id, etag: $etag) {
      ...EventTypeFields
    }
  }
`);

const UnarchiveEventTypeMutation = graphql(`
  mutation UnarchiveEventType($id: ID!, $etag: String!) {
    unarchiveEventType(id: $id, etag: $etag) {
      ...EventTypeFields
    }
  }
`);

export async function setEventTypeArchived(id: string, etag: string, archived: boolean): Promise<EventType> {
  if (archived) return (await consoleRequest(ArchiveEventTypeMutation, { id, etag })).archiveEventType;
  return (await consoleRequest(UnarchiveEventTypeMutation, { id, etag })).unarchiveEventType;
}
