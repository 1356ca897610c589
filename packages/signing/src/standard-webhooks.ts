// Standard Webhooks signing (https://www.standardwebhooks.com): `v1,<Base64 HMAC-SHA256>` over
// `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the Base64-decoded part of a `whsec_` secret.
// The HMAC runs over the body's exact bytes, never over a decoded or re-serialised copy: what is signed is
// what goes on the wire.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** The spec allows keys of 24 to 64 bytes; we make 32. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const GENERATED_KEY_BYTES = 32;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export interface SignPayloadInput {
  /** The webhook-id header: the message ID, the same across retries and replays. */
  readonly msgId: string;
  /** The webhook-timestamp header: unix seconds, fresh for each attempt. */
  readonly timestamp: number;
  /** The exact bytes sent. */
  readonly body: Buffer;
  /** Every secret that signs now (the current one and any still in a rotation overlap), `whsec_...`. */
  readonly secrets: readonly string[];
}

/** `whsec_` + standard Base64 of 32 random bytes. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(GENERATED_KEY_BYTES).toString('base64')}`;
}

/**
 * Decodes a `whsec_` secret into its HMAC key. Throws on anything else: secrets are made by the service, so a
 * malformed one is a bug, and Buffer's lenient Base64 decoder would otherwise sign with a different key.
 */
export function decodeSecret(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('signing secret must start with whsec_');
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) throw new Error('signing secret must be standard Base64 after whsec_');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new Error(`signing secret must hold ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`);
  }
  return key;
}

/** The webhook-signature header value: one `v1,<sig>` per secret, space-separated, in the order given. */
export function signPayload({ msgId, timestamp, body, secrets }: SignPayloadInput): string {
  if (secrets.length === 0) throw new Error('at least one signing secret is needed');
  if (msgId === '') throw new Error('webhook-id must not be empty');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new Error('webhook-timestamp must be a non-negative integer of unix seconds');
  }
  const prefix = Buffer.from(`${msgId}.${timestamp}.`, 'utf8');
  return secrets
    .map((secret) => {
      const mac = createHmac('sha256', decodeSecret(secret)).update(prefix).update(body).digest('base64');
      return `v1,${mac}`;
    })
    .join(' ');
}
