import { z } from 'zod';
import { RawJson } from '../common/raw-json.js';
import { boundedText } from '../common/validation.js';

export const EVENT_TYPE_NAME_MAX = 128;
export const EXAMPLE_MAX_BYTES = 16_384;
const NAME_PATTERN = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/;
const RESERVED_FIRST_WORDS = new Set(['webhooks', 'svc']);

export const eventTypeName = z
  .string()
  .max(EVENT_TYPE_NAME_MAX)
  .regex(NAME_PATTERN, 'must be lowercase words (a-z, 0-9, _) separated by dots')
  .refine(
    (name) => !RESERVED_FIRST_WORDS.has(name.split('.')[0]!),
    'names starting with webhooks. or svc. are reserved',
  )
  // For the API description: the name's pattern with the reserved first words kept out.
  .meta({ pattern: `^(?!(?:${[...RESERVED_FIRST_WORDS].join('|')})(?:\\.|$))${NAME_PATTERN.source.slice(1)}` });

/** Whether `name` has the form of an event type name (of the catalog or not). */
export function isEventTypeName(name: string): boolean {
  return name.length <= EVENT_TYPE_NAME_MAX && NAME_PATTERN.test(name);
}

/** The example arrives as its exact JSON text. */
const example = z
  .instanceof(RawJson, { message: 'must be a JSON value' })
  .refine((raw) => raw.byteLength <= EXAMPLE_MAX_BYTES, `must be at most ${EXAMPLE_MAX_BYTES} bytes`)
  .nullable();

export const CreateEventTypeInput = z.strictObject({
  name: eventTypeName,
  description: boundedText(0, 4096).default(''),
  example: example.default(null),
});
export type CreateEventTypeInput = z.output<typeof CreateEventTypeInput>;

export const UpdateEventTypeInput = z.strictObject({
  description: boundedText(0, 4096).optional(),
  example: example.optional(),
  archived: z.literal(false, { message: 'only false is accepted; DELETE archives a type' }).optional(),
});
export type UpdateEventTypeInput = z.output<typeof UpdateEventTypeInput>;

export const ListEventTypesQuery = z.strictObject({
  name: z.string().max(EVENT_TYPE_NAME_MAX).optional(),
  limit: z.unknown().optional(),
  cursor: z.unknown().optional(),
});
export type ListEventTypesQuery = z.output<typeof ListEventTypesQuery>;
