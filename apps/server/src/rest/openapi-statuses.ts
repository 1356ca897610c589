import { ERROR_STATUS, type ErrorCode } from '@svc/core';
import type { RouteSpec, UnauthenticatedRouteSpec } from './route.js';

export const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Why the common rules answer each code, for the response descriptions and examples. */
const RULE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_json: 'the body is not valid JSON',
  unauthorized: 'a valid secret key is required',
  account_suspended: 'the team is suspended',
  body_too_large: 'the request body is over 1 MiB',
  unsupported_media_type: 'request bodies must be application/json',
  unsupported_mode: 'test mode is not supported; omit Svc-Mode or send live',
  invalid_field: 'a field, header or parameter is invalid (named in field)',
  invalid_cursor: 'cursor is not a cursor of this list',
  not_found: 'the resource does not exist (a malformed ID names nothing either)',
  precondition_required: 'If-Match is required',
  revision_conflict: 'the resource has changed (the current ETag is in the ETag header)',
  idempotency_conflict: 'the Idempotency-Key was used for another request',
  request_in_progress: 'a request with this Idempotency-Key is still running (Retry-After: 1)',
  rate_limited: 'too many requests; retry after the time in Retry-After',
  internal_error: 'internal error (opaque; the server logs the cause)',
  bad_request: 'the request is not valid HTTP/1.1 (refused by the HTTP parser before any route)',
  request_timeout: 'the request did not arrive in time',
  headers_too_large: 'the request line and headers are over 16 KiB',
};

/** The code an example of a declared error status shows when the common rules do not raise that status. */
const EXAMPLE_CODE: Record<number, ErrorCode> = {
  402: 'billing_required',
  404: 'not_found',
  409: 'invalid_state',
  410: 'payload_expired',
  413: 'body_too_large',
  422: 'invalid_field',
  429: 'rate_limited',
  503: 'temporarily_unavailable',
};

/**
 * Every status a route can answer, each with the codes the common rules answer it with (docs/api-choices.md,
 * "Order of the common checks"), derived from the route's declaration, plus the statuses it declares for its
 * operation. An empty list means only the operation's own codes.
 */
export function documentedStatuses(route: RouteSpec): Map<number, ErrorCode[]> {
  const statuses = new Map<number, Set<ErrorCode>>();
  const add = (code: ErrorCode) => {
    const status = ERROR_STATUS[code];
    if (!statuses.has(status)) statuses.set(status, new Set());
    statuses.get(status)!.add(code);
  };
  for (const status of Object.keys(route.responses).map(Number))
    if (!statuses.has(status)) statuses.set(status, new Set());
  // Node's HTTP parser may refuse any request before it reaches a route; Svc-Mode is checked first on every route,
  // GET included; then the key; any route may fail unexpectedly.
  for (const code of [
    'bad_request',
    'request_timeout',
    'headers_too_large',
    'unsupported_mode',
    'invalid_field',
    'unauthorized',
    'account_suspended',
    'internal_error',
  ] as const)
    add(code);
  if (route.rateClass !== 'none') add('rate_limited');
  // The body rules (Fastify answers them for any method that sends a body).
  for (const code of ['invalid_json', 'body_too_large', 'unsupported_media_type'] as const) add(code);
  if (route.ifMatch) for (const code of ['precondition_required', 'revision_conflict'] as const) add(code);
  if (route.idempotent) for (const code of ['idempotency_conflict', 'request_in_progress'] as const) add(code);
  if ('cursor' in queryShape(route)) add('invalid_cursor');
  if (/:(?!token\b|flag_key\b)[A-Za-z_]+/.test(route.path)) add('not_found');
  return new Map([...statuses].sort(([a], [b]) => a - b).map(([status, codes]) => [status, [...codes]]));
}

function queryShape(route: RouteSpec): Record<string, unknown> {
  const shape = (route.query as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ?? {};
}

/** The statuses of the receive route: what it declares, plus Svc-Mode's 422 and the opaque 500. */
export function unauthenticatedStatuses(route: UnauthenticatedRouteSpec): number[] {
  return [...new Set([...Object.keys(route.responses).map(Number), 422, 500])].sort((a, b) => a - b);
}

/** "Conflict: idempotency_conflict (...), request_in_progress (...)", or the status text alone. */
export function statusDescription(status: number, codes: readonly ErrorCode[]): string {
  const text = STATUS_TEXT[status] ?? String(status);
  if (codes.length === 0) return text;
  const listed = codes.map((code) => (RULE_MESSAGES[code] ? `\`${code}\` (${RULE_MESSAGES[code]})` : `\`${code}\``));
  return `${text}: ${listed.join(', ')}${hasOwnCodes(status, codes) ? ', or a code of the operation' : ''}`;
}

/** Whether the status also carries codes of the operation itself (declared by the route, not by the rules). */
function hasOwnCodes(status: number, codes: readonly ErrorCode[]): boolean {
  return ![401, 403, 412, 415, 428, 500].includes(status) && !(status === 400 && codes.includes('invalid_json'));
}

/** Example error bodies of a status: one per code the rules answer, else one with the operation's usual code. */
export function errorExamples(status: number, codes: readonly ErrorCode[]): Record<string, { value: unknown }> {
  const shown = codes.length > 0 ? codes : EXAMPLE_CODE[status] ? [EXAMPLE_CODE[status]] : [];
  return Object.fromEntries(
    shown.map((code) => [
      code,
      {
        value: {
          error: {
            code,
            message: RULE_MESSAGES[code] ?? code.replace(/_/g, ' '),
            ...(code === 'invalid_field' ? { field: 'name' } : {}),
          },
        },
      },
    ]),
  );
}
