/**
 * Log serialization shared by every process (server, worker, scripts): pass `LOG_SERIALIZERS` to pino, e.g.
 * `pino({ level, serializers: LOG_SERIALIZERS })` or `logger.child({}, { serializers: LOG_SERIALIZERS })`.
 */

/**
 * Error members that say what failed without carrying the values involved. Everything else is dropped: TypeORM's
 * QueryFailedError carries `parameters` (an endpoint URL with its secret query, payloads) and copies the
 * driver's `detail` ("Key (external_id)=(...) already exists") onto itself; `driverError` holds both again.
 */
const SAFE_ERROR_MEMBERS = [
  'code',
  'severity',
  'schema',
  'table',
  'column',
  'constraint',
  'dataType',
  'routine',
  'statusCode',
  'query',
] as const;

const MAX_CAUSE_DEPTH = 5;

export interface SerializedError {
  type: string;
  message: string;
  stack?: string;
  cause?: SerializedError;
  [member: string]: unknown;
}

/** A pino `err` serializer that keeps the error's type, message, stack, safe members and cause chain. */
export function serializeError(error: unknown): SerializedError | unknown {
  return serializeAt(error, 0);
}

function serializeAt(error: unknown, depth: number): SerializedError | unknown {
  if (!(error instanceof Error)) {
    // Thrown non-errors: a primitive says what it is; an object could hold anything.
    return typeof error === 'object' && error !== null ? { type: 'object', message: 'a non-Error object' } : error;
  }
  const out: SerializedError = { type: error.constructor.name || error.name || 'Error', message: error.message };
  if (error.stack !== undefined) out.stack = error.stack;
  const record = error as unknown as Record<string, unknown>;
  for (const member of SAFE_ERROR_MEMBERS) {
    const value = record[member];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[member] = value;
  }
  if (error.cause !== undefined && depth < MAX_CAUSE_DEPTH) {
    const cause = serializeAt(error.cause, depth + 1);
    if (cause !== undefined) out.cause = cause as SerializedError;
  }
  return out;
}

const RECEIVE_PATH = /(^|\/)receive\/[^/?#]*([^?#]*)(\?[^#]*)?/;

/**
 * A request URL fit for logs: the token of `/receive/{token}` is the secret part of a source's receive URL, so it
 * becomes `[token]`; the query of a receive URL goes too (providers may put credentials there).
 */
export function redactRequestUrl(url: string): string {
  return url.replace(RECEIVE_PATH, (_match, lead: string, rest: string) => `${lead}receive/[token]${rest}`);
}

/** The serializers every process's pino logger uses. */
export const LOG_SERIALIZERS = { err: serializeError } as const;
