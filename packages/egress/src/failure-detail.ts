// Where an attempt without an HTTP answer failed and why, in words a support person can act on: the phase (name
// resolution, connecting, the TLS handshake, waiting for the response headers, reading the response), a cause from
// a fixed list, the error code it came from, the address connected to and the time each phase took. Built from
// error codes and our own measurements only: never from error messages, header values or the URL's query.
import type { ConnectionTrace, RequestTrace } from './connection-trace.js';
import { UNTRUSTED_CERTIFICATE_CODES } from './egress-errors.js';
import { DnsLookupError, UnsafeDestinationError } from './pinned-connector.js';

export const FAILURE_PHASES = ['dns', 'connect', 'tls', 'request', 'response'] as const;
export type FailurePhase = (typeof FAILURE_PHASES)[number];

export const FAILURE_CAUSES = [
  'no_such_host',
  'dns_failure',
  'unsafe_host',
  'unsafe_address',
  'refused',
  'unreachable',
  'timeout',
  'reset',
  'closed',
  'certificate_expired',
  'certificate_not_yet_valid',
  'certificate_wrong_host',
  'certificate_untrusted',
  'handshake_failed',
  'too_large',
  'invalid_response',
  'other',
] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];

/** Milliseconds each phase took; null when the attempt did not reach it (or a reused connection had paid it). */
export interface PhaseTimings {
  dnsMs: number | null;
  connectMs: number | null;
  tlsMs: number | null;
  /** From the start of the attempt to the response headers. */
  firstByteMs: number | null;
  totalMs: number;
}

export interface FailureDetail {
  phase: FailurePhase;
  cause: FailureCause;
  /** The error code it was read from (`ECONNREFUSED`, `CERT_HAS_EXPIRED`, `UND_ERR_HEADERS_TIMEOUT`), or null. */
  code: string | null;
  /** The IP address connected to (or refused by the safety rules), when one was known. */
  address: string | null;
  port: number | null;
  /** The request went over a keep-alive connection an earlier attempt had opened. */
  connectionReused: boolean;
  timings: PhaseTimings;
}

const TIMEOUT_CODES = new Set([
  'ETIMEOUT',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function causeOf(phase: FailurePhase, code: string | null, timedOut: boolean): FailureCause {
  if (timedOut || (code !== null && TIMEOUT_CODES.has(code))) return 'timeout';
  if (code === null) return 'other';
  if (phase === 'dns') {
    if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'NXDOMAIN') return 'no_such_host';
    return 'dns_failure';
  }
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
  if (code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH')
    return 'closed';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'unreachable';
  if (code === 'CERT_HAS_EXPIRED') return 'certificate_expired';
  if (code === 'CERT_NOT_YET_VALID') return 'certificate_not_yet_valid';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') return 'certificate_wrong_host';
  if (UNTRUSTED_CERTIFICATE_CODES.has(code)) return 'certificate_untrusted';
  if (code === 'UND_ERR_HEADERS_OVERFLOW' || code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return 'too_large';
  if (code.startsWith('HPE_')) return 'invalid_response';
  if (phase === 'tls') return 'handshake_failed';
  return 'other';
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : null;
}

export interface FailureContext {
  error: unknown;
  /** The attempt's total deadline fired. */
  deadlineHit: boolean;
  /** The trace of the connection that failed to open (the connector handed it on with its error). */
  failedConnection: ConnectionTrace | undefined;
  /** The connection the request was written to, if it got that far. */
  usedConnection: ConnectionTrace | undefined;
  /** A connection still being made for this request's target when the deadline fired. */
  awaitedConnection: ConnectionTrace | undefined;
  request: RequestTrace;
  firstByteMs: number | null;
  totalMs: number;
}

/** The detail of a failure without an HTTP answer. */
export function describeFailure(context: FailureContext): FailureDetail {
  const { error, request } = context;
  const timedOut = context.deadlineHit || (error instanceof Error && error.name === 'TimeoutError');
  const connection = context.failedConnection ?? context.usedConnection ?? context.awaitedConnection;
  const reused = context.failedConnection === undefined && request.reusedConnection;
  let phase: FailurePhase;
  if (context.failedConnection !== undefined || (request.socket === null && connection !== undefined)) {
    phase = connection!.step === 'open' ? 'connect' : connection!.step;
  } else if (request.socket !== null) {
    phase = context.firstByteMs === null ? 'request' : 'response';
  } else {
    // The deadline fired before any connection was there to wait on (the request was queued behind others).
    phase = 'connect';
  }
  const code = error instanceof DnsLookupError ? error.code : codeOf(error);
  const cause: FailureCause =
    error instanceof UnsafeDestinationError
      ? error.blocked === 'address'
        ? 'unsafe_address'
        : 'unsafe_host'
      : causeOf(phase, code, timedOut);
  // Headers too large or not HTTP: an answer came, and it was its reading that failed.
  if (phase === 'request' && (cause === 'too_large' || cause === 'invalid_response')) phase = 'response';
  return {
    phase,
    cause,
    code: error instanceof UnsafeDestinationError ? null : code,
    address: connection?.address ?? null,
    port: connection?.port ?? null,
    connectionReused: reused,
    timings: {
      dnsMs: reused ? null : (connection?.dnsMs ?? null),
      connectMs: reused ? null : (connection?.connectMs ?? null),
      tlsMs: reused ? null : (connection?.tlsMs ?? null),
      firstByteMs: context.firstByteMs,
      totalMs: context.totalMs,
    },
  };
}
