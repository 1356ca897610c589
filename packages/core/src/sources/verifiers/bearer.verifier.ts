// A sender that can only add a fixed header: `Authorization: Bearer <secret>`. Nothing is signed, so there is no
// timestamp and no event ID; the caller deduplicates by body. The token is compared through SHA-256 digests so
// the comparison takes the same time whatever the lengths.
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { securityHeaders } from './inbound-request.js';
import { jsonAccepted, matchesAny, MAX_SECRET_BYTES } from './signature-checks.js';
import { reject, type SecretGeneratingVerifier } from './verifier.js';

const MIN_TOKEN_LENGTH = 16;
/** RFC 6750 b64token: what may follow `Bearer `. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const BEARER = /^Bearer +(\S+) *$/i;

export type BearerSettings = Record<string, never>;

export const bearerVerifier: SecretGeneratingVerifier<BearerSettings> = {
  kind: 'bearer',
  // No event ID at all: captures are deduplicated by body.
  eventIdSigned: false,
  settings: z.strictObject({}),

  checkSecret(secret) {
    if (secret.length < MIN_TOKEN_LENGTH || secret.length > MAX_SECRET_BYTES || !B64TOKEN.test(secret))
      return `the secret must be ${MIN_TOKEN_LENGTH} to ${MAX_SECRET_BYTES} characters of letters, digits and -._~+/ (then = only)`;
    return null;
  },

  /** 32 random bytes, Base64url: 43 characters that need no escaping in a header. */
  generateSecret: () => randomBytes(32).toString('base64url'),

  verify(request, _settings, secrets) {
    const headers = securityHeaders(request, ['authorization']);
    if (!headers.ok) return headers;
    const [authorization] = headers.values;
    if (authorization === undefined) return reject('missing_signature');
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) return reject('malformed_signature');
    const expected = secrets.map(digest);
    if (!matchesAny(expected, [digest(token)])) return reject('bad_signature');
    return { ok: true, eventId: null };
  },

  accepted: jsonAccepted,
};

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
