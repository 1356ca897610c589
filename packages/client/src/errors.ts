import type { Schema } from './paths.js';

type ErrorBody = Schema<'Error'>['error'];

/**
 * An answer outside 2xx (after the client's own retries), with the API's error body: `code` (stable, e.g.
 * `revision_conflict`), `field` and `resource_id` when the service names them, the HTTP status, the Request-Id to
 * quote to support, the current ETag of a 412 and the Retry-After of a 429 or 503.
 */
export class SvcApiError extends Error {
  override readonly name = 'SvcApiError';
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly resource_id: string | undefined;
  readonly requestId: string | undefined;
  /** The current ETag (412 revision_conflict): send it as If-Match after re-applying the change. */
  readonly etag: string | undefined;
  /** Seconds the service asked to wait (429, 503, 409 request_in_progress). */
  readonly retryAfter: number | undefined;

  constructor(response: Response, body: unknown) {
    const error = errorOf(body);
    super(error?.message ?? `HTTP ${response.status} without the API's error body`);
    this.status = response.status;
    this.code = error?.code ?? 'unexpected_response';
    this.field = error?.field;
    this.resource_id = error?.resource_id;
    this.requestId = response.headers.get('request-id') ?? undefined;
    this.etag = response.headers.get('etag') ?? undefined;
    this.retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  }
}

function errorOf(body: unknown): ErrorBody | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const error = (body as { error: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as Partial<ErrorBody>;
  return typeof code === 'string' && typeof message === 'string' ? (error as ErrorBody) : undefined;
}

/** Retry-After in seconds: delay-seconds, or an HTTP date (RFC 9110, 10.2.3). */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
