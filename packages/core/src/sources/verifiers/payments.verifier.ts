// The payments kind: Stripe's scheme, as the official `stripe` library (webhooks.constructEvent) checks it.
// `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]` (other schemes such as v0 are ignored), where v1 is
// HMAC-SHA256 over `<t>.<body>` keyed by the whole `whsec_...` string as UTF-8. The library only refuses old
// timestamps; we also refuse ones more than 300 s ahead, as for every kind. Stripe retries an event with the same
// body `id`, which is the dedup key.
import { z } from 'zod';
import { jsonObjectBody, securityHeaders } from './inbound-request.js';
import {
  decodeHex,
  hmac,
  isFresh,
  jsonAccepted,
  matchesAny,
  parseUnixSeconds,
  pastedSecretProblem,
} from './signature-checks.js';
import { reject, type Verifier } from './verifier.js';

const SECRET_PREFIX = 'whsec_';
/** Stripe's endpoint secrets are whsec_ and 32 or more characters; 8 is a floor against obvious mistakes. */
const MIN_SECRET_BYTES = SECRET_PREFIX.length + 8;

export type PaymentsSettings = Record<string, never>;

export const paymentsVerifier: Verifier<PaymentsSettings> = {
  kind: 'payments',
  // id is in the signed body, with the signed timestamp.
  eventIdSigned: true,
  settings: z.strictObject({}),

  checkSecret(secret) {
    if (!secret.startsWith(SECRET_PREFIX))
      return `the secret must start with ${SECRET_PREFIX} (the endpoint's signing secret)`;
    return pastedSecretProblem(secret, MIN_SECRET_BYTES);
  },

  generateSecret: () => null,

  verify(request, _settings, secrets, now) {
    const headers = securityHeaders(request, ['stripe-signature']);
    if (!headers.ok) return headers;
    const [header] = headers.values;
    if (header === undefined) return reject('missing_signature');
    const parsed = parseSignatureHeader(header);
    if (parsed === null) return reject('malformed_signature');

    const expected = secrets.map((secret) => hmac('sha256', secret, `${parsed.timestampText}.`, request.rawBody));
    if (!matchesAny(expected, parsed.signatures)) return reject('bad_signature');
    if (!isFresh(parsed.timestamp, now)) return reject('stale_timestamp');
    const id = jsonObjectBody(request)?.id;
    if (typeof id !== 'string' || id === '') return reject('malformed_body');
    return { ok: true, eventId: id };
  },

  accepted: jsonAccepted,
};

interface SignatureHeader {
  timestampText: string;
  timestamp: number;
  signatures: Buffer[];
}

/** `t=..,v1=..,v1=..,v0=..`: exactly one t, at least one v1 in hex; unknown keys are skipped. */
function parseSignatureHeader(header: string): SignatureHeader | null {
  let timestampText: string | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const equals = item.indexOf('=');
    if (equals < 0) continue;
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (key === 't') {
      if (timestampText !== null) return null;
      timestampText = value;
    } else if (key === 'v1') {
      const signature = decodeHex(value);
      if (signature !== null) signatures.push(signature);
    }
  }
  const timestamp = timestampText === null ? null : parseUnixSeconds(timestampText);
  if (timestampText === null || timestamp === null || signatures.length === 0) return null;
  return { timestampText, timestamp, signatures };
}
