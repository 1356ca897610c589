// The commerce kind: Shopify's scheme, as its docs ("Verify the webhook") and @shopify/shopify-api check it.
// `X-Shopify-Hmac-Sha256: <Base64 HMAC-SHA256 of the body>` keyed by the app's client secret (or the store's
// webhook signing key). No signed timestamp. X-Shopify-Event-Id names the event (the same across the subscriptions
// it triggers) and X-Shopify-Webhook-Id the delivery, kept on retries; the first present is the dedup key.
// Shopify's library also wants the topic, shop domain and API version headers; we do not, since they are unsigned
// and capture does not need them.
import { z } from 'zod';
import { securityHeaders } from './inbound-request.js';
import { decodeBase64, hmac, jsonAccepted, matchesAny, pastedSecretProblem } from './signature-checks.js';
import { reject, type Verifier } from './verifier.js';

const MIN_SECRET_BYTES = 8;

export type CommerceSettings = Record<string, never>;

export const commerceVerifier: Verifier<CommerceSettings> = {
  kind: 'commerce',
  // X-Shopify-Event-Id and X-Shopify-Webhook-Id are not signed.
  eventIdSigned: false,
  settings: z.strictObject({}),
  checkSecret: (secret) => pastedSecretProblem(secret, MIN_SECRET_BYTES),
  generateSecret: () => null,

  verify(request, _settings, secrets) {
    const headers = securityHeaders(request, ['x-shopify-hmac-sha256', 'x-shopify-event-id', 'x-shopify-webhook-id']);
    if (!headers.ok) return headers;
    const [header, eventId, webhookId] = headers.values;
    if (header === undefined) return reject('missing_signature');
    const signature = decodeBase64(header);
    if (signature === null) return reject('malformed_signature');

    const expected = secrets.map((secret) => hmac('sha256', secret, request.rawBody));
    if (!matchesAny(expected, [signature])) return reject('bad_signature');
    return { ok: true, eventId: eventId ?? webhookId ?? null };
  },

  accepted: jsonAccepted,
};
