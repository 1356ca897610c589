// Svc-Signature (spec/event-subscriptions.md, "Events"): `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
// one v1 per active secret, keyed by the base64url decoding of the secret after `whsec_`. The HMAC runs over the
// exact bytes sent.
import { createHmac, randomBytes } from 'node:crypto';

export const SVC_SECRET_PREFIX = 'whsec_';
const GENERATED_KEY_BYTES = 32;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** `whsec_` + base64url (no padding) of 32 random bytes: what the spec's verification rule decodes. */
export function generateSvcSecret(): string {
  return `${SVC_SECRET_PREFIX}${randomBytes(GENERATED_KEY_BYTES).toString('base64url')}`;
}

/** The HMAC key of a subscription secret. Throws on anything the service would not have made. */
export function decodeSvcSecret(secret: string): Buffer {
  if (!secret.startsWith(SVC_SECRET_PREFIX)) throw new Error('subscription secret must start with whsec_');
  const encoded = secret.slice(SVC_SECRET_PREFIX.length);
  if (!BASE64URL.test(encoded)) throw new Error('subscription secret must be base64url after whsec_');
  const key = Buffer.from(encoded, 'base64url');
  if (key.length < 24 || key.toString('base64url') !== encoded) throw new Error('subscription secret is malformed');
  return key;
}

export interface SvcSignatureInput {
  /** Unix seconds, fresh for each attempt. */
  readonly timestamp: number;
  /** The exact bytes sent. */
  readonly body: Buffer;
  /** Every active secret: the current one first, then one still in its rotation overlap. */
  readonly secrets: readonly string[];
}

/** The Svc-Signature header value. */
export function signSvcSignature(input: SvcSignatureInput): string {
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) throw new Error('timestamp must be unix seconds');
  if (input.secrets.length === 0) throw new Error('at least one secret signs');
  const prefix = Buffer.from(`${input.timestamp}.`, 'utf8');
  const signatures = input.secrets.map((secret) =>
    createHmac('sha256', decodeSvcSecret(secret)).update(prefix).update(input.body).digest('hex'),
  );
  return [`t=${input.timestamp}`, ...signatures.map((s) => `v1=${s}`)].join(',');
}
