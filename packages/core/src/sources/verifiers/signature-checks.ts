// The pieces every signed scheme shares: HMAC over exact bytes, constant-time matching against every active secret,
// strict decoding of signatures, the 300-second timestamp window, and the checks on secrets operators paste in.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { VerifierReply } from './verifier.js';

export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** Seconds a signed timestamp may be away from now, in either direction. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

/** Longest secret an operator may give (UTF-8 bytes): far above any provider's, small enough to seal and store. */
export const MAX_SECRET_BYTES = 512;

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UNIX_SECONDS = /^[0-9]{1,12}$/;

/** HMAC over the signed content given as consecutive parts (text as UTF-8, bytes as they are). */
export function hmac(algorithm: HmacAlgorithm, key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Whether any given signature equals any expected one. Every pair is compared with timingSafeEqual, without
 * stopping at the first match; lengths are compared first because timingSafeEqual throws on unequal lengths, and
 * a digest's length is public.
 */
export function matchesAny(expected: readonly Buffer[], given: readonly Buffer[]): boolean {
  let matched = false;
  for (const e of expected) {
    for (const g of given) {
      if (e.length === g.length && timingSafeEqual(e, g)) matched = true;
    }
  }
  return matched;
}

/** Hex (either case) to bytes, or null when it is not hex. */
export function decodeHex(text: string): Buffer | null {
  return HEX.test(text) ? Buffer.from(text, 'hex') : null;
}

/** Padded standard Base64 to bytes, or null: Buffer's own decoder would silently skip stray characters. */
export function decodeBase64(text: string): Buffer | null {
  return text !== '' && BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}

/** A timestamp header of unix seconds, or null when it is not plain decimal digits. */
export function parseUnixSeconds(text: string): number | null {
  return UNIX_SECONDS.test(text) ? Number(text) : null;
}

/** Whether a signed timestamp (unix seconds) lies within the tolerance of now, in either direction. */
export function isFresh(timestamp: number, now: Date): boolean {
  return Math.abs(Math.floor(now.getTime() / 1000) - timestamp) <= TIMESTAMP_TOLERANCE_SECONDS;
}

/**
 * The usual problems with a secret copied from a provider's dashboard: null when fine, else the message. Leading or
 * trailing whitespace is refused rather than trimmed, since it is almost always a paste accident and the provider
 * signs with the secret as it issued it.
 */
export function pastedSecretProblem(secret: string, minBytes: number): string | null {
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < minBytes || bytes > MAX_SECRET_BYTES)
    return `the secret must be ${minBytes} to ${MAX_SECRET_BYTES} bytes`;
  if (secret.trim() !== secret) return 'the secret must not start or end with whitespace';
  return null;
}

/** The success answer of the kinds without a provider-specific one: the message ID, and whether it was a duplicate. */
export function jsonAccepted(messageId: string, duplicate: boolean): VerifierReply {
  return {
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify({ message_id: messageId, duplicate }),
  };
}
