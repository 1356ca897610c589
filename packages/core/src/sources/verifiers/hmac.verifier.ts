// The template for signed providers without a kind of their own: one signature header holding an HMAC of the raw
// body (optionally with a prefix such as `sha256=`), optionally over a signed-content template that includes a
// timestamp header, and optionally an event-ID header for deduplication. docs/sources.md describes the settings.
import { z } from 'zod';
import { securityHeaders } from './inbound-request.js';
import {
  decodeBase64,
  decodeHex,
  hmac,
  isFresh,
  jsonAccepted,
  matchesAny,
  parseUnixSeconds,
  pastedSecretProblem,
} from './signature-checks.js';
import { reject, type Verifier } from './verifier.js';

/** RFC 9110 token characters. */
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_HEADER_NAME = 100;
const MAX_PREFIX = 32;
const MAX_SIGNED_CONTENT = 256;
const MIN_SECRET_BYTES = 8;

const BODY = '{body}';
const TIMESTAMP = '{timestamp}';
/** Anything that looks like a placeholder; only {body} and {timestamp} exist, so others are typos. */
const PLACEHOLDER = /\{[a-z_]+\}/g;

const headerName = z.string().max(MAX_HEADER_NAME).regex(HEADER_TOKEN, 'must be an HTTP header name');

export const hmacSettings = z
  .strictObject({
    /** The header holding the signature. */
    header: headerName,
    algorithm: z.enum(['sha1', 'sha256', 'sha512']).default('sha256'),
    /** How the signature is written: hex (either case) or standard Base64. */
    encoding: z.enum(['hex', 'base64']).default('hex'),
    /** Text before the signature in the header, such as `sha256=`; matched exactly. */
    prefix: z
      .string()
      .max(MAX_PREFIX)
      .regex(/^[!-~]+$/, 'must be printable ASCII without spaces')
      .nullable()
      .default(null),
    /** A header of unix seconds; it must then appear in signed_content, and must be within 300 s of now. */
    timestamp_header: headerName.nullable().default(null),
    /** What is signed: {body} once (the raw bytes) and {timestamp} when timestamp_header is set. */
    signed_content: z.string().max(MAX_SIGNED_CONTENT).default(BODY),
    /** A header holding the provider's event ID, used for deduplication. */
    event_id_header: headerName.nullable().default(null),
  })
  .superRefine((settings, ctx) => {
    const template = settings.signed_content;
    if (template.split(BODY).length !== 2)
      ctx.addIssue({ code: 'custom', path: ['signed_content'], message: `must contain ${BODY} exactly once` });
    const unknown = (template.match(PLACEHOLDER) ?? []).find((p) => p !== BODY && p !== TIMESTAMP);
    if (unknown !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['signed_content'],
        message: `has no placeholder ${unknown}; use ${BODY} and ${TIMESTAMP}`,
      });
    // A timestamp that is not signed proves nothing, and a signed one needs a header to come from.
    if (settings.timestamp_header !== null && !template.includes(TIMESTAMP))
      ctx.addIssue({
        code: 'custom',
        path: ['signed_content'],
        message: `must contain ${TIMESTAMP} when timestamp_header is set (for example "${TIMESTAMP}.${BODY}")`,
      });
    if (settings.timestamp_header === null && template.includes(TIMESTAMP))
      ctx.addIssue({
        code: 'custom',
        path: ['timestamp_header'],
        message: `is required when signed_content uses ${TIMESTAMP}`,
      });
    const names = [settings.header, settings.timestamp_header, settings.event_id_header].flatMap((name) =>
      name === null ? [] : [name.toLowerCase()],
    );
    if (new Set(names).size !== names.length)
      ctx.addIssue({
        code: 'custom',
        path: ['header'],
        message: 'header, timestamp_header and event_id_header must differ',
      });
  });

export type HmacSettings = z.output<typeof hmacSettings>;

export const hmacVerifier: Verifier<HmacSettings> = {
  kind: 'hmac',
  // event_id_header is never part of signed_content.
  eventIdSigned: false,
  settings: hmacSettings,
  checkSecret: (secret) => pastedSecretProblem(secret, MIN_SECRET_BYTES),
  generateSecret: () => null,

  verify(request, settings, secrets, now) {
    const headers = securityHeaders(request, [settings.header, settings.timestamp_header, settings.event_id_header]);
    if (!headers.ok) return headers;
    const [signatureText, timestampText, eventId] = headers.values;
    if (signatureText === undefined) return reject('missing_signature');
    if (settings.timestamp_header !== null && timestampText === undefined) return reject('missing_signature');

    const prefix = settings.prefix ?? '';
    const encoded = signatureText.startsWith(prefix) ? signatureText.slice(prefix.length) : null;
    const signature =
      encoded === null ? null : settings.encoding === 'hex' ? decodeHex(encoded) : decodeBase64(encoded);
    const timestamp = timestampText === undefined ? null : parseUnixSeconds(timestampText);
    if (signature === null || (timestampText !== undefined && timestamp === null)) return reject('malformed_signature');

    const [before, after] = settings.signed_content
      .split(BODY)
      .map((part) => part.replaceAll(TIMESTAMP, timestampText ?? ''));
    const expected = secrets.map((secret) =>
      hmac(settings.algorithm, secret, before ?? '', request.rawBody, after ?? ''),
    );
    if (!matchesAny(expected, [signature])) return reject('bad_signature');
    if (timestamp !== null && !isFresh(timestamp, now)) return reject('stale_timestamp');
    return { ok: true, eventId: eventId ?? null };
  },

  accepted: jsonAccepted,
};
