// The codehost kind: GitHub's scheme, as the official `@octokit/webhooks-methods` verify() checks it.
// `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` keyed by the webhook secret. GitHub has no signed
// timestamp; a redelivery keeps its X-GitHub-Delivery GUID, which is the dedup key (body hash when absent).
// The legacy SHA-1 X-Hub-Signature header is not accepted on its own.
import { z } from 'zod';
import { securityHeaders } from './inbound-request.js';
import { decodeHex, hmac, jsonAccepted, matchesAny, pastedSecretProblem } from './signature-checks.js';
import { reject, type Verifier } from './verifier.js';

const PREFIX = 'sha256=';

export type CodehostSettings = Record<string, never>;

export const codehostVerifier: Verifier<CodehostSettings> = {
  kind: 'codehost',
  // X-GitHub-Delivery is not signed.
  eventIdSigned: false,
  settings: z.strictObject({}),
  /** GitHub takes any non-empty secret. */
  checkSecret: (secret) => pastedSecretProblem(secret, 1),
  generateSecret: () => null,

  verify(request, _settings, secrets) {
    const headers = securityHeaders(request, ['x-hub-signature-256', 'x-github-delivery']);
    if (!headers.ok) return headers;
    const [header, delivery] = headers.values;
    if (header === undefined) return reject('missing_signature');
    const signature = header.startsWith(PREFIX) ? decodeHex(header.slice(PREFIX.length)) : null;
    if (signature === null) return reject('malformed_signature');

    const expected = secrets.map((secret) => hmac('sha256', secret, request.rawBody));
    if (!matchesAny(expected, [signature])) return reject('bad_signature');
    return { ok: true, eventId: delivery ?? null };
  },

  accepted: jsonAccepted,
};
