// Standard Webhooks signing (https://www.standardwebhooks.com) over `<webhook-id>.<webhook-timestamp>.<body>`:
// - symmetric: `v1,<Base64 HMAC-SHA256>`, keyed by the Base64-decoded part of a `whsec_` secret;
// - asymmetric: `v1a,<Base64 ed25519 signature>` by a `whsk_` secret key, checked with its `whpk_` public key.
// Both run over the body's exact bytes, never over a decoded or re-serialised copy: what is signed is what goes on
// the wire.
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** An ed25519 secret key: `whsk_` + standard Base64 of its 32-byte seed. Never leaves the service. */
export const SECRET_KEY_PREFIX = 'whsk_';
/** An ed25519 public key: `whpk_` + standard Base64 of its 32 raw bytes (RFC 8032), what a receiver holds. */
export const PUBLIC_KEY_PREFIX = 'whpk_';

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
  /**
   * Every secret that signs now (the current one and any still in a rotation overlap): `whsec_...` signs `v1`,
   * `whsk_...` signs `v1a`.
   */
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

/**
 * The webhook-signature header value: one signature per secret, space-separated, in the order given (`v1,<sig>` for
 * a `whsec_` secret, `v1a,<sig>` for a `whsk_` secret key).
 */
export function signPayload({ msgId, timestamp, body, secrets }: SignPayloadInput): string {
  if (secrets.length === 0) throw new Error('at least one signing secret is needed');
  if (msgId === '') throw new Error('webhook-id must not be empty');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new Error('webhook-timestamp must be a non-negative integer of unix seconds');
  }
  const prefix = Buffer.from(`${msgId}.${timestamp}.`, 'utf8');
  return secrets
    .map((secret) => {
      if (secret.startsWith(SECRET_KEY_PREFIX)) {
        const signed = sign(null, Buffer.concat([prefix, body]), privateKeyOf(secret));
        return `v1a,${signed.toString('base64')}`;
      }
      const mac = createHmac('sha256', decodeSecret(secret)).update(prefix).update(body).digest('base64');
      return `v1,${mac}`;
    })
    .join(' ');
}

/** An ed25519 key pair in Standard Webhooks' form. */
export interface SigningKeyPair {
  /** `whsk_...`: sealed at rest, never shown. */
  secretKey: string;
  /** `whpk_...`: shown to anyone who may read the endpoint. */
  publicKey: string;
}

/** A new ed25519 key pair. */
export function generateKeyPair(): SigningKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'jwk' }).d;
  if (!seed) throw new Error('ed25519 key without its seed');
  return {
    secretKey: `${SECRET_KEY_PREFIX}${Buffer.from(seed, 'base64url').toString('base64')}`,
    publicKey: publicKeyText(publicKey),
  };
}

/** The `whpk_` public key of a `whsk_` secret key. */
export function publicKeyOf(secretKey: string): string {
  return publicKeyText(createPublicKey(privateKeyOf(secretKey)));
}

function publicKeyText(key: KeyObject): string {
  const x = key.export({ format: 'jwk' }).x;
  if (!x) throw new Error('ed25519 public key without its point');
  return `${PUBLIC_KEY_PREFIX}${Buffer.from(x, 'base64url').toString('base64')}`;
}

/**
 * Opened key objects by secret key text: building one from its seed costs more than the signature. Bounded: an
 * endpoint has at most two keys signing at once, and the cache starts over when it is full.
 */
const privateKeys = new Map<string, KeyObject>();
const PRIVATE_KEY_CACHE_ENTRIES = 10_000;

function privateKeyOf(secretKey: string): KeyObject {
  let key = privateKeys.get(secretKey);
  if (key) return key;
  const encoded = secretKey.slice(SECRET_KEY_PREFIX.length);
  const seed = Buffer.from(encoded, 'base64');
  if (!secretKey.startsWith(SECRET_KEY_PREFIX) || !BASE64.test(encoded) || seed.length !== 32)
    throw new Error('secret key must be whsk_ and the standard Base64 of a 32-byte ed25519 seed');
  key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  if (privateKeys.size >= PRIVATE_KEY_CACHE_ENTRIES) privateKeys.clear();
  privateKeys.set(secretKey, key);
  return key;
}

/** The fixed DER head of a PKCS #8 ed25519 private key (RFC 8410), before its 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
