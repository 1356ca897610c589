// Standard Webhooks (https://www.standardwebhooks.com), as the official `standardwebhooks` library checks it:
// webhook-id, webhook-timestamp and webhook-signature (a space-separated list of `v1,<Base64 HMAC-SHA256>`, any
// of which may match) over `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the Base64-decoded part of the
// `whsec_` secret. Other versions in the list (`v1a,` asymmetric signatures) are skipped, as the library does.
import { z } from 'zod';
import { generateSigningSecret } from '../../endpoints/endpoint-secrets.js';
import { securityHeaders } from './inbound-request.js';
import { decodeBase64, hmac, isFresh, jsonAccepted, matchesAny, parseUnixSeconds } from './signature-checks.js';
import { reject, type SecretGeneratingVerifier } from './verifier.js';

const SECRET_PREFIX = 'whsec_';
/** The Standard Webhooks spec allows keys of 24 to 64 bytes. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

export type StandardWebhooksSettings = Record<string, never>;

export const standardWebhooksVerifier: SecretGeneratingVerifier<StandardWebhooksSettings> = {
  kind: 'standard_webhooks',
  // webhook-id is signed with webhook-timestamp.
  eventIdSigned: true,
  settings: z.strictObject({}),

  checkSecret(secret) {
    const key = secret.startsWith(SECRET_PREFIX) ? decodeBase64(secret.slice(SECRET_PREFIX.length)) : null;
    if (key === null || key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES)
      return `the secret must be ${SECRET_PREFIX} followed by standard Base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`;
    return null;
  },

  generateSecret: generateSigningSecret,

  verify(request, _settings, secrets, now) {
    const headers = securityHeaders(request, ['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    if (!headers.ok) return headers;
    const [id, timestampText, signatureList] = headers.values;
    if (id === undefined || timestampText === undefined || signatureList === undefined)
      return reject('missing_signature');
    const timestamp = parseUnixSeconds(timestampText);
    const signatures = signatureList.split(' ').flatMap((entry) => {
      if (!entry.startsWith('v1,')) return [];
      const signature = decodeBase64(entry.slice('v1,'.length));
      return signature === null ? [] : [signature];
    });
    if (timestamp === null || signatures.length === 0) return reject('malformed_signature');

    const expected = secrets.map((secret) =>
      hmac('sha256', signingKey(secret), `${id}.${timestampText}.`, request.rawBody),
    );
    if (!matchesAny(expected, signatures)) return reject('bad_signature');
    if (!isFresh(timestamp, now)) return reject('stale_timestamp');
    return { ok: true, eventId: id };
  },

  accepted: jsonAccepted,
};

/** The HMAC key of a stored secret (checked by checkSecret or generated, so well-formed). */
function signingKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}
