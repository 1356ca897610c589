// The chat kind: Slack's scheme ("Verifying requests from Slack"), as @slack/bolt checks it.
// `X-Slack-Signature: v0=<hex HMAC-SHA256>` over `v0:<X-Slack-Request-Timestamp>:<body>`, keyed by the app's
// signing secret, within 5 minutes. Once verified, a JSON `url_verification` request is answered with its challenge
// and not captured. Events API bodies are JSON with an `event_id` (kept on retries): the dedup key. Interactivity
// payloads and slash commands are form-encoded without one: deduplicated by body.
import { z } from 'zod';
import { jsonObjectBody, mediaType, securityHeaders } from './inbound-request.js';
import { decodeHex, hmac, isFresh, matchesAny, parseUnixSeconds, pastedSecretProblem } from './signature-checks.js';
import { reject, type Verifier, type VerifierReply } from './verifier.js';

const VERSION = 'v0';
const MIN_SECRET_BYTES = 8;

export type ChatSettings = Record<string, never>;

export const chatVerifier: Verifier<ChatSettings> = {
  kind: 'chat',
  // event_id is in the signed body, with the signed timestamp.
  eventIdSigned: true,
  settings: z.strictObject({}),
  checkSecret: (secret) => pastedSecretProblem(secret, MIN_SECRET_BYTES),
  generateSecret: () => null,

  verify(request, _settings, secrets, now) {
    const headers = securityHeaders(request, ['x-slack-signature', 'x-slack-request-timestamp']);
    if (!headers.ok) return headers;
    const [header, timestampText] = headers.values;
    if (header === undefined || timestampText === undefined) return reject('missing_signature');
    const signature = header.startsWith(`${VERSION}=`) ? decodeHex(header.slice(VERSION.length + 1)) : null;
    const timestamp = parseUnixSeconds(timestampText);
    if (signature === null || timestamp === null) return reject('malformed_signature');

    const expected = secrets.map((secret) => hmac('sha256', secret, `${VERSION}:${timestampText}:`, request.rawBody));
    if (!matchesAny(expected, [signature])) return reject('bad_signature');
    if (!isFresh(timestamp, now)) return reject('stale_timestamp');

    if (mediaType(request) !== 'application/json') return { ok: true, eventId: null };
    const body = jsonObjectBody(request);
    if (body === null) return reject('malformed_body');
    if (body.type === 'url_verification') {
      if (typeof body.challenge !== 'string') return reject('malformed_body');
      return { ok: true, eventId: null, reply: challengeReply(body.challenge) };
    }
    return { ok: true, eventId: typeof body.event_id === 'string' && body.event_id !== '' ? body.event_id : null };
  },

  /** Slack wants a quick empty 200; anything in the body would be shown to no one. */
  accepted: () => ({ status: 200, contentType: 'text/plain; charset=utf-8', body: '' }),
};

/** Slack accepts the challenge as plain text, as JSON or form-encoded; plain text is the simplest. */
function challengeReply(challenge: string): VerifierReply {
  return { status: 200, contentType: 'text/plain; charset=utf-8', body: challenge };
}
