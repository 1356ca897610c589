import { etagFor } from '../common/etag.js';
import type { EventTypeEntity } from './event-type.entity.js';

/** What reads show of an event type; transports render it, never the entity. */
export interface EventTypeView {
  id: string;
  name: string;
  description: string;
  /** The example exactly as the operator wrote it (JSON text), or null. */
  example: string | null;
  archived: boolean;
  version: string;
  etag: string;
  createdAt: Date;
  updatedAt: Date;
}

export function toEventTypeView(eventType: EventTypeEntity): EventTypeView {
  return {
    id: eventType.id,
    name: eventType.name,
    description: eventType.description,
    example: eventType.example,
    archived: eventType.archived,
    version: eventType.version,
    etag: etagFor(eventType.id, eventType.version),
    createdAt: eventType.createdAt,
    updatedAt: eventType.updatedAt,
  };
}
