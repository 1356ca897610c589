import { ID_PREFIXES } from '@svc/core';

type JsonObject = Record<string, unknown>;

/** The 26 base32 characters after an ID's prefix, in an example. */
const EXAMPLE_ID_BODY = '01jd8x9m2k3n4p5q6r7s8t9v0w';

export function exampleId(prefix: string): string {
  return `${prefix}${EXAMPLE_ID_BODY}`;
}

/** What ID an `<x>_id` field holds, for fields declared without a pattern. */
const ID_FIELDS: Record<string, string> = {
  tenant_id: ID_PREFIXES.tenant,
  endpoint_id: ID_PREFIXES.endpoint,
  message_id: ID_PREFIXES.message,
  source_id: ID_PREFIXES.source,
  delivery_id: ID_PREFIXES.delivery,
  replay_id: ID_PREFIXES.replay,
  event_id: ID_PREFIXES.platformEvent,
  environment_id: ID_PREFIXES.environment,
  replay_of: ID_PREFIXES.delivery,
  repaired_by: ID_PREFIXES.delivery,
};

/** Example text by field name, for strings whose schema does not pin them down. */
const FIELD_TEXT: Record<string, string> = {
  url: 'https://receiver.example.com/webhooks',
  name: 'Acme',
  external_id: 'customer-1234',
  description: 'An invoice was paid',
  event_type: 'invoice.paid',
  content_type: 'application/json',
  body_base64: 'eyJpbnZvaWNlIjoiaW5fMTIzIn0=',
  authorization: 'Bearer receiver-token',
  cursor: 'eyJzIjoiZXhhbXBsZSIsImEiOiJ3ZG1fMDEifQ',
  next_cursor: 'eyJzIjoiZXhhbXBsZSIsImEiOiJ3ZG1fMDEifQ',
  etag: '"wd:wdt_01jd8x9m2k3n4p5q6r7s8t9v0w:1"',
  message: 'a human-readable explanation',
  rate_version: '2026-11-01',
  plan: 'pro',
};

/** Strings tried, in order, against a pattern no table entry names. */
const PATTERN_CANDIDATES = [
  '2026-11-02T10:00:00.000Z',
  '2026-11-02T10:00:00Z',
  '3',
  '0.000120',
  'invoice.paid',
  '/type',
  'customer-1234',
  '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  '2026-11',
  '"wd:wdt_01jd8x9m2k3n4p5q6r7s8t9v0w:1"',
  'example',
];

/** A JSON value for an any-JSON field (a payload). */
const ANY_JSON = { invoice_id: 'in_123', amount: 1200 };

function exampleString(schema: JsonObject, field: string | undefined): string {
  const pattern = typeof schema['pattern'] === 'string' ? schema['pattern'] : undefined;
  const min = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
  const max = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : Infinity;
  const fits = (text: string) =>
    [...text].length >= min && [...text].length <= max && (!pattern || new RegExp(pattern, 'u').test(text));
  if (schema['format'] === 'date-time') return '2026-11-02T10:00:00.000Z';
  const prefix = pattern ? /^\^([a-z]+_)/.exec(pattern)?.[1] : undefined;
  const candidates = [
    ...(prefix ? [exampleId(prefix), `${prefix}MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwYz4ypTB7J0k=`] : []),
    ...(field && ID_FIELDS[field] ? [exampleId(ID_FIELDS[field])] : []),
    ...(field && FIELD_TEXT[field] ? [FIELD_TEXT[field]] : []),
    ...(pattern ? PATTERN_CANDIDATES : ['example']),
  ];
  return candidates.find(fits) ?? 'x'.repeat(Math.max(1, min));
}

function exampleNumber(schema: JsonObject): number {
  const minimum = typeof schema['minimum'] === 'number' ? schema['minimum'] : undefined;
  const maximum = typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined;
  const value = minimum ?? (maximum !== undefined && maximum < 1 ? maximum : 1);
  return schema['type'] === 'integer' ? Math.ceil(value) : value;
}

/**
 * An example value of a JSON schema of the document: every property of a response shape, the required ones of a
 * request (and the first alternative of a `oneOf`). The OpenAPI test parses each example with the route's own zod
 * schema, so an example cannot drift from what the server accepts and answers.
 */
export function exampleOf(
  schema: unknown,
  components: Readonly<Record<string, unknown>>,
  io: 'input' | 'output',
  field?: string,
  depth = 0,
): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 12) return null;
  const s = schema as JsonObject;
  if (typeof s['$ref'] === 'string')
    return exampleOf(components[s['$ref'].replace('#/components/schemas/', '')], components, io, field, depth + 1);
  if ('const' in s) return s['const'];
  if (Array.isArray(s['enum'])) return s['enum'][0];
  if (s['default'] !== undefined && io === 'input') return s['default'];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && s['type'] === undefined) {
      const chosen = options.find((option) => (option as JsonObject)['type'] !== 'null') ?? options[0];
      return exampleOf(chosen, components, io, field, depth + 1);
    }
  }
  // A nullable type (`["string", "null"]`) shows its value.
  const type = Array.isArray(s['type']) ? (s['type'].find((t) => t !== 'null') ?? 'null') : s['type'];
  switch (type) {
    case 'string':
      return exampleString(s, field);
    case 'integer':
    case 'number':
      return exampleNumber({ ...s, type });
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const count = Math.max(1, typeof s['minItems'] === 'number' ? s['minItems'] : 1);
      if (typeof s['maxItems'] === 'number' && s['maxItems'] === 0) return [];
      const item = exampleOf(s['items'], components, io, field === undefined ? undefined : singular(field), depth + 1);
      return Array.from({ length: count }, () => item);
    }
    case 'object':
      return exampleObject(s, components, io, depth);
    default:
      // Any JSON value (a payload, an example kept as written).
      return ANY_JSON;
  }
}

function singular(field: string): string {
  return field.endsWith('_ids') ? field.slice(0, -1) : field;
}

function exampleObject(
  s: JsonObject,
  components: Readonly<Record<string, unknown>>,
  io: 'input' | 'output',
  depth: number,
): JsonObject {
  const properties = (s['properties'] ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s['required']) ? (s['required'] as string[]) : []);
  const oneOf = Array.isArray(s['oneOf']) ? (s['oneOf'][0] as JsonObject | undefined) : undefined;
  for (const name of (oneOf?.['required'] as string[] | undefined) ?? []) required.add(name);
  const names = io === 'output' ? Object.keys(properties) : Object.keys(properties).filter((n) => required.has(n));
  const example: JsonObject = {};
  for (const name of names) example[name] = exampleOf(properties[name], components, io, name, depth + 1);
  if (names.length === 0 && typeof s['additionalProperties'] === 'object')
    example['plan'] = exampleOf(s['additionalProperties'], components, io, 'plan', depth + 1);
  return example;
}
