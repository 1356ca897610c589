import { z } from 'zod';
import { ServiceError } from './errors.js';

/**
 * Parses an input with its schema; the first problem becomes 422 invalid_field naming the field by its
 * API name (a dotted path for nested fields).
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  // An unknown field is named first: it usually explains the other problems (a misspelt required field).
  const issue = result.error.issues.find((i) => i.code === 'unrecognized_keys') ?? result.error.issues[0];
  if (!issue) throw new ServiceError('invalid_field', 'invalid request');
  const base = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const field = base ? `${base}.${key}` : key;
    throw new ServiceError('invalid_field', `unknown field ${field}`, { field });
  }
  const field = base || 'body';
  if (issue.code === 'invalid_type') {
    // zod does not report the input by default: look the value up, so a present value of the wrong type is not
    // reported as missing.
    const value = valueAt(raw, issue.path);
    if (value === undefined) throw new ServiceError('invalid_field', `${field} is required`, { field });
    throw new ServiceError('invalid_field', `${field} must be ${describeExpected(issue)}, not ${jsonType(value)}`, {
      field,
    });
  }
  throw new ServiceError('invalid_field', `${field}: ${issue.message}`, { field });
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let current = raw;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const JSON_TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  null: 'null',
};

/** What the schema wanted, in JSON terms ("a string"); a custom message (e.g. "must be a JSON value") wins. */
function describeExpected(issue: z.core.$ZodIssueInvalidType): string {
  const custom = /^must be (.+)$/.exec(issue.message);
  if (custom) return custom[1]!;
  return JSON_TYPE_NAMES[issue.expected] ?? issue.expected;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return JSON_TYPE_NAMES[typeof value] ?? typeof value;
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** A string of 1..max UTF-8 bytes. */
export const boundedText = (min: number, max: number) =>
  z
    .string()
    .refine((s) => utf8Bytes(s) >= min && utf8Bytes(s) <= max, {
      message: min > 0 ? `must be ${min} to ${max} UTF-8 bytes` : `must be at most ${max} UTF-8 bytes`,
    })
    // For the API description: characters, which the byte bounds imply (a character is 1 to 4 bytes).
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max });

/** Metadata: a flat object of string values. The spec leaves its bounds to us (docs/api-choices.md). */
export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_BYTES = 64;
export const METADATA_MAX_VALUE_BYTES = 512;
export const metadataSchema = z.record(z.string(), z.string()).superRefine((value, ctx) => {
  const keys = Object.keys(value);
  if (keys.length > METADATA_MAX_KEYS) ctx.addIssue({ code: 'custom', message: `at most ${METADATA_MAX_KEYS} keys` });
  for (const key of keys) {
    if (utf8Bytes(key) < 1 || utf8Bytes(key) > METADATA_MAX_KEY_BYTES)
      ctx.addIssue({ code: 'custom', message: `keys are 1 to ${METADATA_MAX_KEY_BYTES} bytes`, path: [key] });
    else if (utf8Bytes(value[key] ?? '') > METADATA_MAX_VALUE_BYTES)
      ctx.addIssue({ code: 'custom', message: `values are at most ${METADATA_MAX_VALUE_BYTES} bytes`, path: [key] });
  }
});
