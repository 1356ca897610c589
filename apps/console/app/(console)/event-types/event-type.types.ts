export interface EventType {
  id: string;
  name: string;
  description: string;
  /** The example JSON exactly as written, or null. */
  example: string | null;
  archived: boolean;
  etag: string;
  createdAt: string;
}

export interface EventTypePage {
  nodes: EventType[];
  nextCursor: string | null;
}

export interface EventTypeChanges {
  description: string;
  /** JSON text sent exactly as typed; null means no example. */
  example: string | null;
}

export interface CreateEventTypeInput extends EventTypeChanges {
  name: string;
}

export const EVENT_TYPES_PAGE_SIZE = 20;
