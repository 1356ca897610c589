import { ServiceError } from './errors.js';

/** ETag of a configuration resource: "wd:<id>:<version>" (quoted, strong). */
export function etagFor(id: string, version: string | number | bigint): string {
  return `"wd:${id}:${String(version)}"`;
}

/** One strong ETag in quotes: what If-Match must hold (after trimming surrounding whitespace). */
export const STRONG_ETAG = /^"[\x21\x23-\x7e]{1,200}"$/;

/**
 * Validates an If-Match header holding exactly one strong ETag; 428 when absent, 422 when malformed. `readPath`
 * names the GET whose ETag header to send (e.g. `GET /tenants/{id}`), so the message says where the value comes
 * from.
 */
export function requireIfMatch(header: string | string[] | undefined, readPath?: string): string {
  if (header === undefined)
    throw new ServiceError(
      'precondition_required',
      `If-Match is required: send If-Match with the ETag header from ${readPath ?? 'a GET of this resource'} (or from the response that last changed it)`,
    );
  const value = Array.isArray(header) ? header : [header];
  const only = value.length === 1 ? value[0]!.trim() : '';
  if (!STRONG_ETAG.test(only))
    throw new ServiceError('invalid_field', 'If-Match must hold one strong ETag in quotes', { field: 'If-Match' });
  return only;
}

/** Throws 412 with the current ETag unless the caller's ETag names the current version. */
export function assertCurrent(expected: string, current: string): void {
  if (expected !== current) throw new ServiceError('revision_conflict', 'the resource has changed', { etag: current });
}
