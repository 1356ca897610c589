'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isObject } from '@/lib/action-args.server';
import { toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { createEventType, setEventTypeArchived, updateEventType } from './event-type.api';
import type { CreateEventTypeInput, EventType, EventTypeChanges } from './event-type.types';

function checkChanges(input: unknown): ActionResult<never> | null {
  if (!isObject(input)) return invalidArgument('body', 'the event type must be an object');
  if (typeof input['description'] !== 'string') return invalidArgument('description', 'description must be a string');
  if (input['example'] !== null && typeof input['example'] !== 'string')
    return invalidArgument('example', 'example must be JSON text or null');
  return null;
}

export async function createEventTypeAction(
  input: CreateEventTypeInput,
  idempotencyKey: string,
): Promise<ActionResult<EventType>> {
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  const problem = checkChanges(input);
  if (problem) return problem;
  if (typeof input.name !== 'string') return invalidArgument('name', 'name must be a string');
  return toActionResult(() =>
    createEventType({ name: input.name, description: input.description, example: input.example }, idempotencyKey),
  );
}

export async function updateEventTypeAction(
  id: string,
  etag: string,
  input: EventTypeChanges,
): Promise<ActionResult<EventType>> {
  if (typeof id !== 'string' || typeof etag !== 'string') return invalidArgument('id', 'id and etag must be strings');
  const problem = checkChanges(input);
  if (problem) return problem;
  return toActionResult(() => updateEventType(id, etag, { description: input.description, example: input.example }));
}

export async function setArchivedAction(id: string, etag: string, archived: boolean): Promise<ActionResult<EventType>> {
  if (typeof id !== 'string' || typeof etag !== 'string' || typeof archived !== 'boolean')
    return invalidArgument('id', 'id, etag and archived are required');
  return toActionResult(() => setEventTypeArchived(id, etag, archived));
}
