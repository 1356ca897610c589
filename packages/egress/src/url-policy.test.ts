import { describe, expect, it } from 'vitest';
import { checkReceiverUrl, MAX_RECEIVER_URL_BYTES, type UrlPolicy } from './url-policy.js';

type Expected = 'ok' | 'invalid_field' | 'unsafe_url';

const STRICT: UrlPolicy = { allowLoopback: false, serviceHosts: ['svc.example', 'Hooks.Example.NET.'] };
const LOOPBACK: UrlPolicy = { allowLoopback: true, serviceHosts: ['svc.example'] };

function urlOfBytes(bytes: number): string {
  const prefix = 'https://example.com/';
  return prefix + 'a'.repeat(bytes - prefix.length);
}

const STRICT_VECTORS: ReadonlyArray<readonly [string, Expected]> = [
  // Public hosts.
  ['https://example.com/', 'ok'],
  ['https://example.com', 'ok'],
  ['https://example.com:443/', 'ok'],
  ['https://EXAMPLE.com/Path', 'ok'],
  ['https://hooks.example.co.uk/in/v1', 'ok'],
  ['https://example.com./', 'ok'],
  ['https://bücher.example/', 'ok'],
  ['https://8.8.8.8/', 'ok'],
  ['https://93.184.216.34/', 'ok'],
  ['https://1.1.1.1/hook', 'ok'],
  // Range boundaries: the public neighbour is allowed, the first address of the range is not.
  ['https://9.255.255.255/', 'ok'],
  ['https://10.0.0.0/', 'unsafe_url'],
  ['https://10.1.2.3/', 'unsafe_url'],
  ['https://10.255.255.255/', 'unsafe_url'],
  ['https://11.0.0.0/', 'ok'],
  ['https://172.15.255.255/', 'ok'],
  ['https://172.16.0.0/', 'unsafe_url'],
  ['https://172.31.255.255/', 'unsafe_url'],
  ['https://172.32.0.0/', 'ok'],
  ['https://192.168.0.0/', 'unsafe_url'],
  ['https://192.168.1.1/', 'unsafe_url'],
  ['https://192.168.255.255/', 'unsafe_url'],
  ['https://100.63.255.255/', 'ok'],
  ['https://100.64.0.0/', 'unsafe_url'],
  ['https://100.127.255.255/', 'unsafe_url'],
  ['https://100.128.0.0/', 'ok'],
  ['https://127.0.0.0/', 'unsafe_url'],
  ['https://127.0.0.1/', 'unsafe_url'],
  ['https://127.255.255.255/', 'unsafe_url'],
  ['https://169.254.0.0/', 'unsafe_url'],
  ['https://169.254.169.254/latest/meta-data/', 'unsafe_url'],
  ['https://169.254.255.255/', 'unsafe_url'],
  ['https://0.0.0.0/', 'unsafe_url'],
  ['https://0.255.255.255/', 'unsafe_url'],
  ['https://192.0.0.0/', 'unsafe_url'],
  ['https://192.0.0.170/', 'unsafe_url'],
  ['https://192.0.0.171/', 'unsafe_url'],
  ['https://192.0.0.255/', 'unsafe_url'],
  ['https://192.0.2.0/', 'unsafe_url'],
  ['https://192.0.2.255/', 'unsafe_url'],
  ['https://198.51.100.0/', 'unsafe_url'],
  ['https://198.51.100.255/', 'unsafe_url'],
  ['https://203.0.113.0/', 'unsafe_url'],
  ['https://203.0.113.255/', 'unsafe_url'],
  ['https://192.88.99.0/', 'unsafe_url'],
  ['https://192.88.99.255/', 'unsafe_url'],
  ['https://198.17.255.255/', 'ok'],
  ['https://198.18.0.0/', 'unsafe_url'],
  ['https://198.19.255.255/', 'unsafe_url'],
  ['https://198.20.0.0/', 'ok'],
  ['https://223.255.255.255/', 'ok'],
  ['https://224.0.0.0/', 'unsafe_url'],
  ['https://239.255.255.255/', 'unsafe_url'],
  ['https://240.0.0.0/', 'unsafe_url'],
  ['https://255.255.255.254/', 'unsafe_url'],
  ['https://255.255.255.255/', 'unsafe_url'],
  // Other spellings of loopback and friends, normalised by the URL parser.
  ['https://2130706433/', 'unsafe_url'],
  ['https://0x7f000001/', 'unsafe_url'],
  ['https://0177.0.0.1/', 'unsafe_url'],
  ['https://0x7f.1/', 'unsafe_url'],
  ['https://127.1/', 'unsafe_url'],
  ['https://127.0.0.1./', 'unsafe_url'],
  ['https://0/', 'unsafe_url'],
  ['https://%31%32%37.0.0.1/', 'unsafe_url'],
  ['https://①②⑦.0.0.1/', 'unsafe_url'],
  ['https://１２７.０.０.１/', 'unsafe_url'],
  ['https://0xa9fea9fe/', 'unsafe_url'],
  ['https://3232235777/', 'unsafe_url'],
  ['https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/', 'unsafe_url'],
  // IPv6 literals: never, mapped or not.
  ['https://[::1]/', 'unsafe_url'],
  ['https://[::ffff:7f00:1]/', 'unsafe_url'],
  ['https://[::ffff:127.0.0.1]/', 'unsafe_url'],
  ['https://[2606:2800:220:1:248:1893:25c8:1946]/', 'unsafe_url'],
  // Local, internal and reserved names.
  ['https://localhost/', 'unsafe_url'],
  ['https://LOCALHOST/', 'unsafe_url'],
  ['https://localhost./', 'unsafe_url'],
  ['https://foo.localhost/', 'unsafe_url'],
  ['https://printer.local/', 'unsafe_url'],
  ['https://printer.local./', 'unsafe_url'],
  ['https://PRINTER.LOCAL/', 'unsafe_url'],
  ['https://db.internal/', 'unsafe_url'],
  ['https://metadata.google.internal./', 'unsafe_url'],
  ['https://intranet/', 'unsafe_url'],
  ['https://com/', 'unsafe_url'],
  ['https://nas.localdomain/', 'unsafe_url'],
  ['https://router.home.arpa/', 'unsafe_url'],
  ['https://1.0.0.127.in-addr.arpa/', 'unsafe_url'],
  ['https://example.local.com/', 'ok'],
  ['https://internal.example.com/', 'ok'],
  // Service-owned hosts and their subdomains.
  ['https://svc.example/', 'unsafe_url'],
  ['https://hooks.svc.example/', 'unsafe_url'],
  ['https://HOOKS.SVC.EXAMPLE./', 'unsafe_url'],
  ['https://hooks.example.net/', 'unsafe_url'],
  ['https://notsvc.example/', 'ok'],
  ['https://svc.example.com/', 'ok'],
  // Scheme, port, user information, fragment, length, syntax.
  ['http://example.com/', 'invalid_field'],
  ['http://example.com:443/', 'invalid_field'],
  ['https://example.com:8443/', 'invalid_field'],
  ['https://example.com:80/', 'invalid_field'],
  ['https://example.com:1/', 'invalid_field'],
  ['https://user:pass@example.com/', 'invalid_field'],
  ['https://user@example.com/', 'invalid_field'],
  ['https://:pass@example.com/', 'invalid_field'],
  ['https://@example.com/', 'invalid_field'],
  ['https://:@example.com/', 'invalid_field'],
  ['https:@example.com/', 'invalid_field'],
  ['https://example.com@127.0.0.1/', 'invalid_field'],
  ['https://example.com/#frag', 'invalid_field'],
  ['https://example.com/#', 'invalid_field'],
  ['https://example.com/path?q=1#', 'invalid_field'],
  ['https://example.com/path?q=secret&x=1', 'ok'],
  ['https://example.com/a@b', 'ok'],
  ['https://example.com/?next=a@b', 'ok'],
  ['https://example.com../', 'invalid_field'],
  ['https://.example.com/', 'invalid_field'],
  ['https://127.0.0.1../', 'invalid_field'],
  ['ftp://example.com/', 'invalid_field'],
  ['javascript:alert(1)', 'invalid_field'],
  ['file:///etc/passwd', 'invalid_field'],
  ['data:text/plain,hi', 'invalid_field'],
  ['not a url', 'invalid_field'],
  ['not-a-url', 'invalid_field'],
  ['/relative/path', 'invalid_field'],
  ['//example.com/', 'invalid_field'],
  ['', 'invalid_field'],
  ['https://', 'invalid_field'],
  ['https://example.123/', 'invalid_field'],
  [' https://example.com/', 'invalid_field'],
  ['https://example.com/\n', 'invalid_field'],
  ['https://exa\tmple.com/', 'invalid_field'],
  [urlOfBytes(MAX_RECEIVER_URL_BYTES), 'ok'],
  [urlOfBytes(MAX_RECEIVER_URL_BYTES + 1), 'invalid_field'],
];

function outcome(raw: string, policy: UrlPolicy): Expected {
  const result = checkReceiverUrl(raw, policy);
  return result.ok ? 'ok' : result.code;
}

describe('checkReceiverUrl (strict policy)', () => {
  it('has a vector table covering at least 60 URLs', () => {
    expect(STRICT_VECTORS.length).toBeGreaterThanOrEqual(60);
  });

  it.each(STRICT_VECTORS)('%j -> %s', (raw, expected) => {
    expect(outcome(raw, STRICT)).toBe(expected);
  });

  it('keeps the query exactly and returns the normalised host', () => {
    const result = checkReceiverUrl('https://Example.com:443/path?q=secret&x=1&empty=&%7E=~', STRICT);
    expect(result).toMatchObject({ ok: true, host: 'example.com', hostIsIp: false });
    if (!result.ok) return;
    expect(result.url.search).toBe('?q=secret&x=1&empty=&%7E=~');
    expect(result.url.pathname).toBe('/path');
  });

  it('reports IPv4 hosts in canonical form', () => {
    expect(checkReceiverUrl('https://8.8.8.8/', STRICT)).toMatchObject({ ok: true, host: '8.8.8.8', hostIsIp: true });
  });

  it('drops one trailing dot from the host it returns', () => {
    expect(checkReceiverUrl('https://example.com./', STRICT)).toMatchObject({ ok: true, host: 'example.com' });
  });

  it('returns IDN hosts in punycode', () => {
    expect(checkReceiverUrl('https://bücher.example/', STRICT)).toMatchObject({
      ok: true,
      host: 'xn--bcher-kva.example',
    });
  });

  it('counts the length in UTF-8 bytes, not characters', () => {
    const prefix = 'https://example.com/';
    const twoByteChars = 'é'.repeat((MAX_RECEIVER_URL_BYTES - prefix.length) / 2);
    expect(outcome(prefix + twoByteChars, STRICT)).toBe('ok');
    expect(outcome(`${prefix}${twoByteChars}a`, STRICT)).toBe('invalid_field');
    expect((prefix + twoByteChars).length).toBeLessThan(MAX_RECEIVER_URL_BYTES);
  });

  it('never repeats the URL (or its secret query) in a message', () => {
    const raw = 'https://10.0.0.1/hook?token=s3cr3t';
    const result = checkReceiverUrl(raw, STRICT);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).not.toContain('s3cr3t');
    expect(result.message).not.toContain(raw);
    const userinfo = checkReceiverUrl('https://admin:hunter2@example.com/', STRICT);
    expect(userinfo).toMatchObject({ ok: false, code: 'invalid_field' });
    if (userinfo.ok) return;
    expect(userinfo.message).not.toContain('hunter2');
  });

  it('says which kind of address was refused', () => {
    expect(checkReceiverUrl('https://169.254.169.254/', STRICT)).toMatchObject({
      ok: false,
      code: 'unsafe_url',
      message: expect.stringContaining('link-local'),
    });
  });

  it('refuses service hosts given as addresses and ignores blank entries', () => {
    const policy: UrlPolicy = { allowLoopback: false, serviceHosts: ['', '  ', '93.184.216.34'] };
    expect(outcome('https://93.184.216.34/', policy)).toBe('unsafe_url');
    expect(outcome('https://8.8.8.8/', policy)).toBe('ok');
    expect(outcome('https://example.com/', policy)).toBe('ok');
  });
});

const LOOPBACK_VECTORS: ReadonlyArray<readonly [string, Expected]> = [
  ['http://127.0.0.1:9999/', 'ok'],
  ['http://127.0.0.1/', 'ok'],
  ['https://127.0.0.1:8443/hook?x=1', 'ok'],
  ['http://127.255.255.254:1/', 'ok'],
  ['http://2130706433:8080/', 'ok'],
  ['http://localhost:3000/x', 'ok'],
  ['https://localhost/', 'ok'],
  ['http://LOCALHOST.:3000/', 'ok'],
  ['https://example.com/', 'ok'],
  ['http://example.com/', 'invalid_field'],
  ['https://example.com:8443/', 'invalid_field'],
  ['http://10.0.0.1:80/', 'unsafe_url'],
  ['https://192.168.1.1/', 'unsafe_url'],
  ['https://169.254.169.254/', 'unsafe_url'],
  ['http://0.0.0.0:3000/', 'unsafe_url'],
  ['https://[::1]:8443/', 'unsafe_url'],
  ['http://[::ffff:127.0.0.1]:3000/', 'unsafe_url'],
  ['http://foo.localhost:3000/', 'unsafe_url'],
  ['http://printer.local:3000/', 'unsafe_url'],
  ['https://hooks.svc.example/', 'unsafe_url'],
  ['http://user:pass@127.0.0.1:3000/', 'invalid_field'],
  ['http://localhost:3000/#x', 'invalid_field'],
  ['ftp://127.0.0.1/', 'invalid_field'],
];

describe('checkReceiverUrl (loopback allowed, local development and tests)', () => {
  it.each(LOOPBACK_VECTORS)('%j -> %s', (raw, expected) => {
    expect(outcome(raw, LOOPBACK)).toBe(expected);
  });

  it('returns the loopback host to connect to', () => {
    expect(checkReceiverUrl('http://localhost:3000/x', LOOPBACK)).toMatchObject({ ok: true, host: 'localhost' });
    expect(checkReceiverUrl('http://127.1:3000/x', LOOPBACK)).toMatchObject({
      ok: true,
      host: '127.0.0.1',
      hostIsIp: true,
    });
  });
});
