// The telephony kind: Twilio's scheme ("Webhooks security"), as the official `twilio` library's validateRequest and
// validateRequestWithBody check it. `X-Twilio-Signature: <Base64 HMAC-SHA1>` keyed by the account's auth token over
// the full URL Twilio called, then:
// - for form-encoded bodies, every POST parameter's name and value appended in sorted name order (no separators);
// - for other bodies (JSON), nothing: Twilio adds `bodySHA256=<hex SHA-256 of the body>` to the URL it signs, and
//   the body must hash to it.
// The URL is the public one (SVC_PUBLIC_BASE_URL + path + query as sent), so it verifies behind a proxy. Like the
// library, we try it as received with and without the standard port, then as `new URL()` normalises it (with and
// without the port, and with the legacy querystring encoding). Twilio signs no timestamp; it sends
// I-Twilio-Idempotency-Token, kept on retries, which is the dedup key (body hash when absent).
import { createHash } from 'node:crypto';
import { parse as parseQuerystring, stringify as stringifyQuerystring } from 'node:querystring';
import { z } from 'zod';
import { mediaType, securityHeaders } from './inbound-request.js';
import { decodeBase64, hmac, matchesAny, pastedSecretProblem } from './signature-checks.js';
import { reject, type InboundRequest, type Verifier } from './verifier.js';

const MIN_SECRET_BYTES = 8;
const FORM = 'application/x-www-form-urlencoded';
const BODY_HASH_PARAM = 'bodySHA256';

/** An empty TwiML document: Twilio does nothing more, and status callbacks ignore it. */
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

export type TelephonySettings = Record<string, never>;

export const telephonyVerifier: Verifier<TelephonySettings> = {
  kind: 'telephony',
  // I-Twilio-Idempotency-Token is not signed.
  eventIdSigned: false,
  settings: z.strictObject({}),
  checkSecret: (secret) => pastedSecretProblem(secret, MIN_SECRET_BYTES),
  generateSecret: () => null,

  verify(request, _settings, secrets) {
    const headers = securityHeaders(request, ['x-twilio-signature', 'i-twilio-idempotency-token']);
    if (!headers.ok) return headers;
    const [header, idempotencyToken] = headers.values;
    if (header === undefined) return reject('missing_signature');
    const signature = decodeBase64(header);
    if (signature === null) return reject('malformed_signature');

    const bodyHash = bodyHashParam(request.publicUrl);
    const params = bodyHash !== null ? '' : signedParams(request);
    // A body that is neither form-encoded nor hashed into the URL would not be covered by the signature.
    if (params === null) return reject('malformed_body');

    const expected = secrets.flatMap((secret) =>
      urlCandidates(request.publicUrl).map((url) => hmac('sha1', secret, url + params)),
    );
    if (!matchesAny(expected, [signature])) return reject('bad_signature');
    if (bodyHash !== null) {
      const actual = createHash('sha256').update(request.rawBody).digest('hex');
      if (!matchesAny([Buffer.from(actual)], [Buffer.from(bodyHash)])) return reject('bad_signature');
    }
    return { ok: true, eventId: idempotencyToken ?? null };
  },

  accepted: () => ({ status: 200, contentType: 'text/xml', body: EMPTY_TWIML }),
};

/** The bodySHA256 query parameter of the URL, or null (also for a URL that does not parse). */
function bodyHashParam(url: string): string | null {
  try {
    return new URL(url).searchParams.get(BODY_HASH_PARAM);
  } catch {
    return null;
  }
}

/**
 * What the signature covers after the URL: each form parameter's name and value, names in sorted order, the values
 * of a repeated name deduplicated and sorted (as the library does with the arrays a body parser makes). Empty for
 * an empty body; null for a body of another type.
 */
function signedParams(request: InboundRequest): string | null {
  if (request.rawBody.length === 0) return '';
  if (mediaType(request) !== FORM) return null;
  const byName = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(request.rawBody.toString('utf8'))) {
    byName.set(name, [...(byName.get(name) ?? []), value]);
  }
  return [...byName.keys()]
    .sort()
    .map((name) => {
      const values = byName.get(name)!;
      const ordered = values.length === 1 ? values : [...new Set(values)].sort();
      return ordered.map((value) => name + value).join('');
    })
    .join('');
}

/** The URLs twilio.validateRequest tries, in its order, without repeats. */
function urlCandidates(url: string): string[] {
  const candidates = [withoutPort(url), withStandardPort(url)];
  let normalized: string | null = null;
  try {
    normalized = new URL(url).toString();
  } catch {
    // Not a URL `new URL()` accepts: only the as-received forms can match.
  }
  if (normalized !== null) {
    const bare = withoutPort(normalized);
    const ported = withStandardPort(normalized);
    candidates.push(bare, ported, withLegacyQuerystring(bare), withLegacyQuerystring(ported));
  }
  return [...new Set(candidates)];
}

interface UrlParts {
  scheme: string;
  userInfo: string;
  host: string;
  port: string;
  rest: string;
}

/** Splits a URL without normalising it, so the path and query keep the exact characters Twilio signed. */
function splitUrl(url: string): UrlParts | null {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return null;
  const [prefix, scheme, authority] = match as unknown as [string, string, string];
  const userInfoEnd = authority.lastIndexOf('@');
  const hostAndPort = authority.slice(userInfoEnd + 1);
  // A colon starts the port only after the closing bracket of an IPv6 literal.
  const portStart = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
  return {
    scheme,
    userInfo: authority.slice(0, userInfoEnd + 1),
    host: portStart === -1 ? hostAndPort : hostAndPort.slice(0, portStart),
    port: portStart === -1 ? '' : hostAndPort.slice(portStart),
    rest: url.slice(prefix.length),
  };
}

function withStandardPort(url: string): string {
  const parts = splitUrl(url);
  if (!parts || parts.port) return url;
  const port = parts.scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  return parts.scheme + parts.userInfo + parts.host + port + parts.rest;
}

function withoutPort(url: string): string {
  const parts = splitUrl(url);
  if (!parts) return url;
  return parts.scheme + parts.userInfo + parts.host + parts.rest;
}

/** The query re-encoded as Node's legacy querystring does, for back ends that signed an escaped form. */
function withLegacyQuerystring(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1 || queryStart === url.length - 1) return url;
  return `${url.slice(0, queryStart)}?${stringifyQuerystring(parseQuerystring(url.slice(queryStart + 1)))}`;
}
