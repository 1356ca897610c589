import { describe, expect, it } from 'vitest';
import { checkReceiverUrl, MAX_RECEIVER_URL_BYTES, type UrlPolicy } from './url-policy.js';
import { STRICT_URL_VECTORS, STRICT_VECTOR_POLICY, type UrlVerdict } from './url-vectors.js';

type Expected = UrlVerdict;

const STRICT = STRICT_VECTOR_POLICY;
const STRICT_VECTORS = STRICT_URL_VECTORS;
const LOOPBACK: UrlPolicy = { allowLoopback: true, serviceHosts: ['svc.example'] };

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
