// Turns a failed delivery request into an outcome kind and a reason that is safe to log: built from error
// codes only, never from messages that could carry the URL (its query is secret) or receiver-controlled text.
import { DnsLookupError, UnsafeDestinationError } from './pinned-connector.js';

export type FailureKind = 'timeout' | 'network_error' | 'tls_error';

export type ClassifiedFailure =
  | { kind: FailureKind; reason: string }
  | { kind: 'unsafe_destination'; reason: string; resolvesToPrivateAddress: boolean };

const TIMEOUT_CODES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers before the deadline',
  UND_ERR_BODY_TIMEOUT: 'response body stalled past the deadline',
};

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed while sending',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  UND_ERR_CLOSED: 'connection closed',
  UND_ERR_HEADERS_OVERFLOW: 'response headers too large',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'response body shorter than its Content-Length',
  UND_ERR_INVALID_ARG: 'request refused by the HTTP client (invalid header or body)',
};

/** OpenSSL's verification results that mean the chain is not trusted (as Node reports them). */
export const UNTRUSTED_CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);

// Every certificate verification result as Node reports it (untrusted, out of its dates, another host), plus Node's
// own TLS protocol error.
const CERTIFICATE_CODES = new Set([
  ...UNTRUSTED_CERTIFICATE_CODES,
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

function isTlsCode(code: string): boolean {
  return CERTIFICATE_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_');
}

/** `deadlineHit`: the request's total deadline fired, whatever error it surfaced as. */
export function classifyFailure(error: unknown, deadlineHit: boolean, timeoutMs: number): ClassifiedFailure {
  if (error instanceof UnsafeDestinationError) {
    return { kind: 'unsafe_destination', reason: error.reason, resolvesToPrivateAddress: error.blocked === 'address' };
  }
  if (deadlineHit || (error instanceof Error && error.name === 'TimeoutError')) {
    return { kind: 'timeout', reason: `no complete response within ${timeoutMs} ms` };
  }
  if (error instanceof DnsLookupError) return { kind: 'network_error', reason: error.message };

  const code = codeOf(error);
  if (code === undefined) {
    const name = error instanceof Error ? error.name : typeof error;
    return { kind: 'network_error', reason: `network error (${name})` };
  }
  const timeout = TIMEOUT_CODES[code];
  if (timeout !== undefined) return { kind: 'timeout', reason: timeout };
  if (isTlsCode(code)) return { kind: 'tls_error', reason: `TLS handshake failed (${code})` };
  if (code.startsWith('HPE_')) return { kind: 'network_error', reason: `invalid HTTP response (${code})` };
  return { kind: 'network_error', reason: NETWORK_CODES[code] ?? `network error (${code})` };
}
