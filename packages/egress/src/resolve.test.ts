import { describe, expect, it } from 'vitest';
import type { UrlPolicy } from './host-policy.js';
import { checkConnectedAddress, resolveDestination, type LookupFn } from './resolve.js';

const STRICT: UrlPolicy = { allowLoopback: false, serviceHosts: ['svc.example'] };
const LOOPBACK: UrlPolicy = { allowLoopback: true, serviceHosts: ['svc.example'] };

/** A fake resolver: a fixed answer per absolute name, and a record of the names it was asked for. */
function fakeDns(answers: Record<string, string[]>): LookupFn & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<string[]> => {
    asked.push(host);
    const found = answers[host];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return Object.assign(lookup, { asked });
}

describe('resolveDestination', () => {
  it('returns every address when all are public', async () => {
    const dns = fakeDns({ 'hooks.example.com.': ['93.184.216.34', '8.8.8.8'] });
    await expect(resolveDestination('hooks.example.com', STRICT, dns)).resolves.toEqual({
      ok: true,
      addresses: ['93.184.216.34', '8.8.8.8'],
      hostIsIp: false,
    });
  });

  it('refuses the whole name when one address is private (DNS rebinding)', async () => {
    const dns = fakeDns({ 'rebind.example.com.': ['93.184.216.34', '10.0.0.1', '8.8.8.8'] });
    const result = await resolveDestination('rebind.example.com', STRICT, dns);
    expect(result).toEqual({
      ok: false,
      reason: 'host resolves to a private address',
      blocked: 'address',
      address: '10.0.0.1',
    });
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'IPv6'],
    ['not-an-address', 'not a valid IPv4 address'],
  ])('refuses a name that resolves to %s', async (address, words) => {
    const dns = fakeDns({ 'evil.example.com.': ['8.8.8.8', address] });
    const result = await resolveDestination('evil.example.com', STRICT, dns);
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ reason: expect.stringContaining(words) });
  });

  it('refuses a name without addresses', async () => {
    const dns = fakeDns({ 'empty.example.com.': [] });
    await expect(resolveDestination('empty.example.com', STRICT, dns)).resolves.toEqual({
      ok: false,
      reason: 'host has no IPv4 address',
      blocked: 'host',
    });
  });

  it('lets a lookup failure reject, so the caller can tell a network failure from an unsafe host', async () => {
    await expect(resolveDestination('missing.example.com', STRICT, fakeDns({}))).rejects.toThrow('ENOTFOUND');
  });

  it('asks for the absolute name so resolver search domains never apply', async () => {
    const dns = fakeDns({ 'hooks.example.com.': ['8.8.8.8'] });
    await resolveDestination('Hooks.Example.COM.', STRICT, dns);
    expect(dns.asked).toEqual(['hooks.example.com.']);
  });

  it('removes duplicate addresses', async () => {
    const dns = fakeDns({ 'dup.example.com.': ['8.8.8.8', '8.8.8.8', '1.1.1.1'] });
    await expect(resolveDestination('dup.example.com', STRICT, dns)).resolves.toEqual({
      ok: true,
      addresses: ['8.8.8.8', '1.1.1.1'],
      hostIsIp: false,
    });
  });

  it('classifies IP literals directly without a lookup', async () => {
    const dns = fakeDns({});
    await expect(resolveDestination('93.184.216.34', STRICT, dns)).resolves.toEqual({
      ok: true,
      addresses: ['93.184.216.34'],
      hostIsIp: true,
    });
    await expect(resolveDestination('10.0.0.1', STRICT, dns)).resolves.toMatchObject({ ok: false });
    await expect(resolveDestination('0x7f.1', STRICT, dns)).resolves.toMatchObject({ ok: false });
    await expect(resolveDestination('2130706433', STRICT, dns)).resolves.toMatchObject({ ok: false });
    await expect(resolveDestination('[::1]', STRICT, dns)).resolves.toMatchObject({ ok: false });
    await expect(resolveDestination('::ffff:8.8.8.8', STRICT, dns)).resolves.toMatchObject({ ok: false });
    expect(dns.asked).toEqual([]);
  });

  it('refuses blocked names before asking DNS', async () => {
    const dns = fakeDns({});
    for (const host of ['localhost', 'db.internal', 'printer.local.', 'intranet', 'hooks.svc.example', 'a b']) {
      await expect(resolveDestination(host, STRICT, dns)).resolves.toMatchObject({ ok: false });
    }
    expect(dns.asked).toEqual([]);
  });

  it('with loopback allowed, accepts 127.0.0.0/8 and localhost but nothing else private', async () => {
    const dns = fakeDns({ 'dev.example.com.': ['127.0.0.1'], 'lan.example.com.': ['127.0.0.1', '192.168.1.10'] });
    await expect(resolveDestination('localhost', LOOPBACK, dns)).resolves.toEqual({
      ok: true,
      addresses: ['127.0.0.1'],
      hostIsIp: false,
    });
    await expect(resolveDestination('127.0.0.2', LOOPBACK, dns)).resolves.toEqual({
      ok: true,
      addresses: ['127.0.0.2'],
      hostIsIp: true,
    });
    await expect(resolveDestination('dev.example.com', LOOPBACK, dns)).resolves.toEqual({
      ok: true,
      addresses: ['127.0.0.1'],
      hostIsIp: false,
    });
    await expect(resolveDestination('lan.example.com', LOOPBACK, dns)).resolves.toMatchObject({ ok: false });
    await expect(resolveDestination('10.0.0.1', LOOPBACK, dns)).resolves.toMatchObject({ ok: false });
    await expect(resolveDestination('::1', LOOPBACK, dns)).resolves.toMatchObject({ ok: false });
  });
});

describe('checkConnectedAddress', () => {
  const cases: ReadonlyArray<readonly [string | undefined, boolean, ReturnType<typeof checkConnectedAddress>]> = [
    ['93.184.216.34', false, { ok: true, address: '93.184.216.34' }],
    ['::ffff:93.184.216.34', false, { ok: true, address: '93.184.216.34' }],
    ['::FFFF:8.8.8.8', false, { ok: true, address: '8.8.8.8' }],
    ['::ffff:10.0.0.1', false, { ok: false, reason: 'connected to a private address' }],
    ['::ffff:127.0.0.1', false, { ok: false, reason: 'connected to a loopback address' }],
    ['::ffff:7f00:1', false, { ok: false, reason: 'connected to an IPv6 address (deliveries use IPv4 only)' }],
    ['::1', false, { ok: false, reason: 'connected to an IPv6 address (deliveries use IPv4 only)' }],
    ['2606:2800:220:1::1', false, { ok: false, reason: 'connected to an IPv6 address (deliveries use IPv4 only)' }],
    ['169.254.169.254', false, { ok: false, reason: 'connected to a link-local address' }],
    [undefined, false, { ok: false, reason: 'socket has no remote address' }],
    ['', false, { ok: false, reason: 'socket has no remote address' }],
    ['::ffff:127.0.0.1', true, { ok: true, address: '127.0.0.1' }],
    ['127.0.0.1', true, { ok: true, address: '127.0.0.1' }],
    ['::1', true, { ok: false, reason: 'connected to an IPv6 address (deliveries use IPv4 only)' }],
    ['::ffff:10.0.0.1', true, { ok: false, reason: 'connected to a private address' }],
  ];

  it.each(cases)('%j with allowLoopback %s -> %j', (remoteAddress, allowLoopback, expected) => {
    expect(checkConnectedAddress(remoteAddress, allowLoopback ? LOOPBACK : STRICT)).toEqual(expected);
  });
});
