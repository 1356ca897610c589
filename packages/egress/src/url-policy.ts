// Checks a receiver URL before it is stored (spec: endpoint `url`). The host is judged as the WHATWG URL
// parser normalises it, never by pattern-matching the raw string, so decimal, octal, hex, short, dotted,
// percent-encoded and full-width spellings of an address all land on the same canonical dotted-quad.
//
// Error codes, checked in this order (the first failure wins):
//   invalid_field: longer than 2,048 bytes (UTF-8, of the raw string); whitespace or control characters;
//                  not an absolute URL; a scheme other than http(s); user information (even an empty
//                  `https://@host/`); a fragment (even a bare trailing `#`); an empty label in the host.
//   unsafe_url:    an IPv4 address in any non-global range; any IPv6 literal; `localhost` and `*.localhost`,
//                  `.local`, `.internal`, `.localdomain`, `.arpa` (so `.home.arpa`), single-label names,
//                  service-owned hosts and their subdomains.
//   invalid_field: `http:` or a port other than 443 (checked after the host, because the loopback setting
//                  opens any port and http for 127.0.0.0/8 and `localhost` only).
// A host name with one trailing dot (`example.com.`) is accepted: it is the same absolute name, and the
// returned `host` drops the dot (use it for DNS, SNI and certificate checks). Blocked names are caught with
// or without the dot.
//
// The returned URL is for inspection; callers keep the raw string (its query is kept exactly and is secret:
// never log it, and no message here repeats it).
import { checkHostName, type UrlPolicy } from './host-policy.js';

export type { UrlPolicy } from './host-policy.js';

export type UrlCheckCode = 'invalid_field' | 'unsafe_url';

export type UrlCheck =
  { ok: true; url: URL; host: string; hostIsIp: boolean } | { ok: false; code: UrlCheckCode; message: string };

export const MAX_RECEIVER_URL_BYTES = 2048;

/**
 * The shape checkReceiverUrl accepts under the strict policy, as a pattern for the API description: https (any
 * case), host labels that are not empty (a trailing dot allowed), port 443 if any, no user information, whitespace,
 * control characters or fragment. The checker also refuses hosts that are not public (unsafe_url) and what the
 * WHATWG parser cannot read (a numeric last label that is no IPv4 address); the byte bound is
 * MAX_RECEIVER_URL_BYTES.
 */
export const RECEIVER_URL_PATTERN =
  // eslint-disable-next-line no-control-regex -- controls are exactly what the pattern keeps out
  /^[Hh][Tt][Tt][Pp][Ss]:\/\/(?:[^\x00-\x20\x7f@/?#\\:.]+\.)*[^\x00-\x20\x7f@/?#\\:.]+\.?(?::443)?(?:[/?\\][^\x00-\x20\x7f#]*)?$/;

// C0 controls, space and DEL: the URL parser strips or re-encodes them, so the stored raw string and the
// URL that was checked could disagree.
function hasWhitespaceOrControl(raw: string): boolean {
  for (let index = 0; index < raw.length; index += 1) {
    const code = raw.charCodeAt(index);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}

function invalid(message: string): UrlCheck {
  return { ok: false, code: 'invalid_field', message };
}

// The WHATWG authority runs from after `scheme:` and any slashes to the first `/`, `\`, `?` or `#`; an `@`
// in it starts user information. `url.username` alone cannot see an empty one (`https://@host/`).
function hasUserInfo(raw: string, url: URL): boolean {
  if (url.username !== '' || url.password !== '') return true;
  const afterScheme = raw.slice(raw.indexOf(':') + 1).replace(/^[/\\]*/, '');
  const authorityEnd = afterScheme.search(/[/\\?#]/);
  const authority = authorityEnd === -1 ? afterScheme : afterScheme.slice(0, authorityEnd);
  return authority.includes('@');
}

export function checkReceiverUrl(raw: string, policy: UrlPolicy): UrlCheck {
  if (Buffer.byteLength(raw, 'utf8') > MAX_RECEIVER_URL_BYTES) {
    return invalid(`url must be at most ${MAX_RECEIVER_URL_BYTES} bytes`);
  }
  if (hasWhitespaceOrControl(raw)) return invalid('url must not contain whitespace or control characters');

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('url must be an absolute https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return invalid('url must use https');
  if (hasUserInfo(raw, url)) return invalid('url must not contain user information');
  // The serialisation keeps a `#` whenever the fragment is present, even when it is empty.
  if (url.href.includes('#')) return invalid('url must not contain a fragment');

  const host = checkHostName(url.hostname, policy);
  if (!host.ok) return host;

  if (!(host.loopback && policy.allowLoopback)) {
    if (url.protocol !== 'https:') return invalid('url must use https');
    // The parser drops the default port, so an explicit :443 leaves `port` empty.
    if (url.port !== '') return invalid('url must use port 443');
  }
  return { ok: true, url, host: host.host, hostIsIp: host.hostIsIp };
}
