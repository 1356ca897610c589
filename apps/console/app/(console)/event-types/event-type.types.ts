import type { EventTypeFieldsFragment, EventTypesQuery } from '@/gql/graphql';

export type EventType = EventTypeFieldsFragment;

export type EventTypePage = EventTypesQuery['eventTypes'];

export interface EventTypeChanges {
  description: string;
  /** JSON text sent exactly as typed; null means no example. */
  example: string | null;
}

export interface CreateEventTypeInput extends EventTypeChanges {
  name: string;
}

export const EVENT_TYPES_PAGE_SIZE = 20;
