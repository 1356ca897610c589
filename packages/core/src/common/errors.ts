/** Every error code the API can answer, with its HTTP status. The compiler checks the map is complete. */
export const ERROR_STATUS = {
  /** The request is not valid HTTP (a control character in a header, a malformed request line); Node's parser refuses it. */
  bad_request: 400,
  invalid_json: 400,
  unauthorized: 401,
  billing_required: 402,
  spending_limit: 402,
  account_suspended: 403,
  /** The key may not administer a feature-flag environment the request names (docs/platform.md). */
  environment_access_denied: 403,
  /** A receivers' portal session reached an operation it may not use (docs/portal.md). */
  portal_access_denied: 403,
  not_found: 404,
  method_not_allowed: 405,
  resource_in_use: 409,
  quota_exceeded: 409,
  invalid_state: 409,
  idempotency_conflict: 409,
  request_in_progress: 409,
  /** The request did not arrive in time (Node's request timeout). */
  request_timeout: 408,
  payload_expired: 410,
  revision_conflict: 412,
  body_too_large: 413,
  unsupported_media_type: 415,
  invalid_field: 422,
  unsupported_mode: 422,
  invalid_cursor: 422,
  unsafe_url: 422,
  invalid_event_type: 422,
  transform_failed: 422,
  precondition_required: 428,
  /** The request line and headers are over Node's limit (16 KiB). */
  headers_too_large: 431,
  rate_limited: 429,
  /** More than 4 messages of one team being stored at once (docs/api-choices.md). */
  too_many_concurrent_requests: 429,
  queue_full: 429,
  internal_error: 500,
  temporarily_unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ServiceErrorDetails {
  field?: string;
  resourceId?: string;
  /** Seconds, for 429 and request_in_progress. */
  retryAfter?: number;
  /** Current ETag, for revision_conflict. */
  etag?: string;
}

/** The one error type every layer throws; transports render it from its code. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: ServiceErrorDetails;

  constructor(code: ErrorCode, message: string, details: ServiceErrorDetails = {}) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const invalidField = (field: string, message: string): ServiceError =>
  new ServiceError('invalid_field', message, { field });

export const notFound = (what: string): ServiceError => new ServiceError('not_found', `${what} not found`);

export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof ServiceError;
}
