// What every verifier kind implements. A verifier is pure: it gets the request as received, the source's settings,
// every secret active now and the time, and answers accept (with the provider's event ID for deduplication) or
// reject (with a reason for webhooks.source.rejected). It never touches storage; the receive route does.
//
//   kind + settings + secrets[] + InboundRequest + now -> VerifyResult
//
// Rules shared by every kind (docs/sources.md, "Verifier kinds"):
// - the signature is checked over the original bytes and the public URL as the provider called it, never over a
//   parsed or re-serialised copy;
// - a security header (signature, timestamp, event ID) that appears more than once is refused, so a proxy or a
//   framework that keeps the first or the last copy cannot be played against us;
// - comparisons use crypto.timingSafeEqual on equal-length buffers, against every active secret (current first,
//   then those in their rotation overlap);
// - where the scheme has a timestamp, it must lie within 300 seconds of now in either direction;
// - the signature is checked before the timestamp, so stale_timestamp is only reported for authentic requests;
// - the body is read for an event ID or a challenge (payments, chat) only after the signature verifies.
import type { z } from 'zod';
import type { VERIFICATION_KINDS } from '../../catalog/catalog.js';

export type VerifierKind = (typeof VERIFICATION_KINDS)[number];

/** The request exactly as received by POST /receive/{token}. */
export interface InboundRequest {
  rawBody: Buffer;
  /** Node's raw header list [name, value, name, value, ...] as received (request.rawHeaders): duplicates visible. */
  rawHeaders: readonly string[];
  /** The full public URL as the provider called it: SVC_PUBLIC_BASE_URL + path + query exactly as sent. */
  publicUrl: string;
}

export type RejectReason =
  /** The kind's security header(s) are absent or empty. */
  | 'missing_signature'
  /** A security header (signature, timestamp, event ID) appears more than once. */
  | 'duplicate_header'
  /** A security header is present but cannot be parsed. */
  | 'malformed_signature'
  /** No active secret verifies the request. */
  | 'bad_signature'
  /** The signed timestamp is more than 300 seconds away from now, in either direction. */
  | 'stale_timestamp'
  /** The scheme needs something from the body (payments `id`, chat JSON or challenge) and cannot get it. */
  | 'malformed_body';

/** An answer sent instead of capturing a message (chat url_verification), or after capturing one. */
export interface VerifierReply {
  status: number;
  contentType: string;
  body: string;
}

export type VerifyResult =
  | {
      ok: true;
      /** The provider's event ID for deduplication, or null: then the caller dedups by body hash for 24 hours. */
      eventId: string | null;
      /** Set when the request is answered without capturing a message (chat url_verification challenge). */
      reply?: VerifierReply;
    }
  | { ok: false; reason: RejectReason };

export interface Verifier<S> {
  kind: VerifierKind;
  /** The kind's settings (everything except the secret): a strict object with defaults, named as in the API. */
  settings: z.ZodType<S>;
  /**
   * Whether the signature covers the event ID (and a timestamp), so that only the provider can send a new one. When
   * it does not (the ID is a header outside the signed content), anyone holding one request can resend it under a
   * fresh ID: the same body within 24 hours is then a duplicate too, whatever its ID (docs/sources.md,
   * Deduplication).
   */
  eventIdSigned: boolean;
  /**
   * Checks a secret given by the operator: null when fine, else the message of a 422 invalid_field ("the secret
   * must ..."), naming no field so that create and rotate_secret can both use it. The provider issues the secret
   * for hmac, payments, codehost, commerce, chat and telephony; standard_webhooks and bearer may take one too.
   */
  checkSecret(secret: string): string | null;
  /** A new secret for kinds whose secret the service makes (standard_webhooks, bearer); null for the others. */
  generateSecret(): string | null;
  /** Verifies against every active secret (current first, then those in their rotation overlap), in constant time. */
  verify(request: InboundRequest, settings: S, secrets: readonly string[], now: Date): VerifyResult;
  /** The success answer for a captured (or duplicate) message. */
  accepted(messageId: string, duplicate: boolean): VerifierReply;
}

/** A kind whose secret the service makes (standard_webhooks, bearer). */
export type SecretGeneratingVerifier<S> = Omit<Verifier<S>, 'generateSecret'> & { generateSecret(): string };

export const reject = (reason: RejectReason): VerifyResult => ({ ok: false, reason });
