import { z } from 'zod';
import { MAX_RECEIVER_URL_BYTES, RECEIVER_URL_PATTERN } from '@svc/egress';
import { ServiceError } from './errors.js';
import { ID_PREFIXES, ID_SHAPE, type IdKind } from './ids.js';
import { RawJson } from './raw-json.js';

/**
 * Parses an input with its schema; the first problem becomes 422 invalid_field naming the field by its
 * API name (a dotted path for nested fields). Text no resource can hold as sent (a NUL, a lone surrogate) is
 * refused first, wherever it is: every input of both transports passes here.
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  refuseUnstorableText(raw, []);
  const result = schema.safeParse(raw, { error: issueWording });
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

const plural = (count: number | bigint, one: string) => `${count} ${one}${count === 1 || count === 1n ? '' : 's'}`;

/** What a bound is counted in, by what the schema checks (a string's length, an array's items, a number). */
function boundOf(origin: string, limit: number | bigint): string {
  if (origin === 'string') return plural(limit, 'character');
  if (origin === 'array' || origin === 'set') return plural(limit, 'item');
  if (origin === 'object' || origin === 'record' || origin === 'map') return plural(limit, 'key');
  return String(limit);
}

/**
 * The API's wording for what a schema refuses without a message of its own (a schema's own message wins): "must
 * not be empty", "must be at most 128 characters", "must be one of enabled, paused", never zod's defaults such as
 * "Too small: expected string to have >=1 characters". The field is named by parseInput.
 */
function issueWording(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'too_small': {
      const origin = String(issue.origin);
      if (issue.minimum === 1 && (origin === 'string' || origin === 'array')) return 'must not be empty';
      const inclusive = issue.inclusive !== false;
      if (origin === 'string' || origin === 'array' || origin === 'set' || origin === 'object')
        return `must have at least ${boundOf(origin, issue.minimum)}`;
      return `must be ${inclusive ? 'at least' : 'greater than'} ${issue.minimum}`;
    }
    case 'too_big': {
      const origin = String(issue.origin);
      const inclusive = issue.inclusive !== false;
      if (origin === 'string' || origin === 'array' || origin === 'set' || origin === 'object')
        return `must have at most ${boundOf(origin, issue.maximum)}`;
      return `must be ${inclusive ? 'at most' : 'less than'} ${issue.maximum}`;
    }
    case 'invalid_format':
      if (issue.format === 'regex' && 'pattern' in issue) return `must match the pattern ${String(issue.pattern)}`;
      if (issue.format === 'starts_with' && 'prefix' in issue) return `must start with ${String(issue.prefix)}`;
      if (issue.format === 'datetime') return 'must be an RFC 3339 date-time with an offset';
      return `must be a valid ${issue.format}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_type':
      return `must be ${JSON_TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'invalid_union':
      return 'does not match any of the accepted forms';
    case 'invalid_key':
      return 'has a key that is not accepted';
    case 'invalid_element':
      return 'has an element that is not accepted';
    case 'unrecognized_keys':
      return `has unknown fields: ${issue.keys.join(', ')}`;
    default:
      return 'is not accepted';
  }
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

/** A lone surrogate: in the `u` mode a pair is one code point, so only an unpaired half is in category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a text cannot be stored and echoed exactly, or null. */
export function unstorableTextProblem(text: string): string | null {
  // Postgres text and jsonb cannot hold U+0000 at all.
  if (text.includes('\u0000')) return 'must not contain NUL (U+0000)';
  // UTF-8 has no encoding for one half of a surrogate pair: it would be stored as U+FFFD and read back changed.
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone surrogate (an unpaired \\ud800-\\udfff)';
  return null;
}

/**
 * Throws 422 invalid_field for the first string, object key or JSON text kept as written (RawJson) that holds a NUL
 * or a lone surrogate, naming its field. Exact-bytes JSON values (a message payload) arrive as RawJson: their text
 * keeps escapes such as \u0000 as written and is never refused for them.
 */
function refuseUnstorableText(value: unknown, path: readonly string[]): void {
  const field = () => path.join('.') || 'body';
  if (typeof value === 'string') {
    const problem = unstorableTextProblem(value);
    if (problem) throw new ServiceError('invalid_field', `${field()} ${problem}`, { field: field() });
    return;
  }
  if (value instanceof RawJson) {
    if (LONE_SURROGATE.test(value.text))
      throw new ServiceError('invalid_field', `${field()} must be UTF-8 JSON text without a lone surrogate`, {
        field: field(),
      });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => refuseUnstorableText(item, [...path, String(index)]));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    const problem = unstorableTextProblem(key);
    if (problem) throw new ServiceError('invalid_field', `${field()}: keys ${problem}`, { field: field() });
    refuseUnstorableText(item, [...path, key]);
  }
}

/**
 * An ID in a request body or a query: the shape of an ID of `kind` (common/ids.ts), else 422 invalid_field. An ID
 * of the right shape that names nothing is the service's to answer.
 */
export const idOf = (kind: IdKind) =>
  // A pattern rather than a check in code, so the API description carries it (isWellFormedId(id, kind) says the same).
  z
    .string()
    .regex(new RegExp(`^${ID_PREFIXES[kind]}[0-9a-z]{26}$`), { message: `must be an ID (${ID_PREFIXES[kind]}...)` });

/** An ID of any kind (a filter on resources of several kinds, such as an operational event's resource). */
export const anyId = z.string().regex(ID_SHAPE, { message: 'must be an ID (a prefix, _ and 26 base32 characters)' });

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * A receiver URL (endpoints, event subscriptions). The service checks it with @svc/egress's checker (the WHATWG
 * parser, then the host); the API description carries the shape that checker accepts in production: https, a host,
 * port 443 if any, no user information, fragment, whitespace or control characters, at most 2,048 bytes.
 */
export const receiverUrl = z
  .string()
  .min(1)
  .meta({
    maxLength: MAX_RECEIVER_URL_BYTES,
    pattern: RECEIVER_URL_PATTERN.source,
    description:
      'The receiver URL: https on a public host (422 unsafe_url for private, loopback or service-owned hosts), port ' +
      '443 if any, no user information or fragment, at most 2,048 bytes (local mode also accepts http to loopback)',
  });

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
export const metadataSchema = z
  .record(z.string(), z.string())
  .superRefine((value, ctx) => {
    const keys = Object.keys(value);
    if (keys.length > METADATA_MAX_KEYS) ctx.addIssue({ code: 'custom', message: `at most ${METADATA_MAX_KEYS} keys` });
    for (const key of keys) {
      if (utf8Bytes(key) < 1 || utf8Bytes(key) > METADATA_MAX_KEY_BYTES)
        ctx.addIssue({ code: 'custom', message: `keys are 1 to ${METADATA_MAX_KEY_BYTES} bytes`, path: [key] });
      else if (utf8Bytes(value[key] ?? '') > METADATA_MAX_VALUE_BYTES)
        ctx.addIssue({ code: 'custom', message: `values are at most ${METADATA_MAX_VALUE_BYTES} bytes`, path: [key] });
    }
  })
  // For the API description: characters, which the byte bounds imply (a character is 1 to 4 bytes).
  .meta({
    maxProperties: METADATA_MAX_KEYS,
    propertyNames: { type: 'string', minLength: 1, maxLength: METADATA_MAX_KEY_BYTES },
    additionalProperties: { type: 'string', maxLength: METADATA_MAX_VALUE_BYTES },
  });
