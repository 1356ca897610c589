import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@svc/core';
import { readServerConfig } from './config.js';
import { post, startHarness, type Harness } from './testing/harness.js';
import { addressBucketKey, MemoryBuckets, PUBLIC_LIMITS, UNAUTHENTICATED_GRAPHQL } from './public-limits.js';

let h: Harness;
beforeAll(async () => {
  // The proxy in front of the server (here: whatever connects from 127.0.0.9) names the client in X-Forwarded-For.
  h = await startHarness({ trustedProxies: '127.0.0.9' });
});
afterAll(async () => {
  await h.close();
});

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** POSTs a GraphQL document over a connection from `from` (a loopback address of its own), without a key. */
function gqlFrom(from: string, query: string, variables: object, headers: Record<string, string> = {}) {
  const { port } = new URL(h.rootUrl);
  const body = JSON.stringify({ query, variables });
  return new Promise<Answer>((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const SIGN_IN = 'mutation($key: String!) { createConsoleSession(secretKey: $key) { token } }';
const OPEN = 'mutation($t: String!) { openPortalSession(linkToken: $t) { token } }';
const randomKey = () => `svc_sk_${randomBytes(32).toString('base64url')}`;
const randomLink = () => `svc_pl_${randomBytes(32).toString('base64url')}`;
const codeOf = (answer: Answer): string | undefined => answer.body.errors?.[0]?.extensions?.code;

async function newLinkToken(): Promise<string> {
  const tenant = await post(h, '/tenants', { external_id: `t-${randomBytes(4).toString('hex')}`, name: 'T' });
  const created = await post(h, `/tenants/${tenant.json.id}/portal_sessions`, {});
  return new URL(created.json.url, 'http://console.test').searchParams.get('token')!;
}

/** Empties an installation-wide bucket in Postgres, as many clients over many addresses would. */
async function drainInstallation(bucket: string): Promise<void> {
  await h.services.db.query(
    `INSERT INTO rate_limit_buckets (team_id, bucket, tokens, updated_at) VALUES ('*installation', $1, 0, $2)
     ON CONFLICT (team_id, bucket) DO UPDATE SET tokens = 0, updated_at = $2`,
    [bucket, h.clock.now()],
  );
  h.services.rateLimits.forgetLeases();
}

describe('console sign-in without a shared bucket', () => {
  it("one address spending its bucket on made-up keys does not stop another address's sign-in", async () => {
    // Before: one installation-wide bucket of 60 (10/s) taken before the key was checked, so 60 attempts from one
    // client refused every sign-in of the installation.
    const codes = new Set<string | undefined>();
    for (let i = 0; i < 70; i += 1) codes.add(codeOf(await gqlFrom('127.0.0.2', SIGN_IN, { key: randomKey() })));
    expect(codes).toEqual(new Set(['unauthorized', 'rate_limited']));
    expect(codeOf(await gqlFrom('127.0.0.2', SIGN_IN, { key: h.team.key }))).toBe('rate_limited');

    const other = await gqlFrom('127.0.0.3', SIGN_IN, { key: h.team.key });
    expect(other.body.errors).toBeUndefined();
    expect(other.body.data.createConsoleSession.token).toMatch(/^svc_cs_/);
  });

  it('refuses what cannot be a key before spending anything', async () => {
    for (let i = 0; i < 50; i += 1)
      expect(codeOf(await gqlFrom('127.0.0.4', SIGN_IN, { key: `not-a-key-${i}` }))).toBe('unauthorized');
    expect((await gqlFrom('127.0.0.4', SIGN_IN, { key: h.team.key })).body.data.createConsoleSession).toBeTruthy();
  });

  it('keeps an installation-wide ceiling behind the per-address buckets', async () => {
    await drainInstallation(PUBLIC_LIMITS.signIn.installation.bucket);
    expect(codeOf(await gqlFrom('127.0.0.5', SIGN_IN, { key: h.team.key }))).toBe('rate_limited');
    h.clock.advance(1_000);
    expect((await gqlFrom('127.0.0.5', SIGN_IN, { key: h.team.key })).body.data.createConsoleSession).toBeTruthy();
  });
});

describe('portal links without a shared bucket', () => {
  it("one address trying made-up links does not stop another address's link", async () => {
    const link = await newLinkToken();
    const codes = new Set<string | undefined>();
    for (let i = 0; i < 70; i += 1) codes.add(codeOf(await gqlFrom('127.0.0.6', OPEN, { t: randomLink() })));
    expect(codes).toEqual(new Set(['unauthorized', 'rate_limited']));
    expect(codeOf(await gqlFrom('127.0.0.6', OPEN, { t: link }))).toBe('rate_limited');

    const opened = await gqlFrom('127.0.0.7', OPEN, { t: link });
    expect(opened.body.data.openPortalSession.token).toMatch(/^svc_ps_/);
  });

  it('limits one link token whatever address tries it', async () => {
    const link = await newLinkToken();
    const { burst } = PUBLIC_LIMITS.portalOpen.perCredential;
    const answers = [];
    for (let i = 0; i <= burst; i += 1) answers.push(codeOf(await gqlFrom(`127.0.1.${i + 1}`, OPEN, { t: link })));
    // The first opening works; the link is used, so the next ones are refused; past the token's bucket, 429.
    expect(answers).toEqual([undefined, ...Array(burst - 1).fill('unauthorized'), 'rate_limited']);
  });
});

describe('GraphQL work no team pays for', () => {
  const refusedDocument = '{ noSuchField }';

  it("is limited per address: one address's invalid documents stop neither its keyed requests nor another's", async () => {
    const { burst } = UNAUTHENTICATED_GRAPHQL;
    for (let i = 0; i < burst; i += 1) {
      const answer = await gqlFrom('127.0.0.20', refusedDocument, {});
      expect(answer.body.errors[0].extensions.code, `request ${i}`).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    // Spent: refused before the document is read, with Retry-After.
    const refused = await gqlFrom('127.0.0.20', refusedDocument, {});
    expect(refused.status).toBe(429);
    expect(refused.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'rate_limited' } })]);
    expect(codeOf(await gqlFrom('127.0.0.20', '{ __typename }', {}))).toBe('rate_limited');
    // Credentials are checked first instead: a wrong one is 401 without reading the document, a key works.
    const wrong = await gqlFrom('127.0.0.20', refusedDocument, {}, { authorization: `Bearer ${randomKey()}` });
    expect([wrong.status, codeOf(wrong)]).toEqual([401, 'unauthorized']);
    const keyed = await gqlFrom('127.0.0.20', '{ viewer { teamId } }', {}, { authorization: `Bearer ${h.team.key}` });
    expect(keyed.body.data.viewer.teamId).toBe(h.team.teamId);
    // Another address is untouched; time refills the bucket.
    expect((await gqlFrom('127.0.0.21', '{ __typename }', {})).body.data.__typename).toBe('Query');
    h.clock.advance(1_000 / UNAUTHENTICATED_GRAPHQL.rate);
    expect((await gqlFrom('127.0.0.20', '{ __typename }', {})).body.data.__typename).toBe('Query');
  });
});

describe('the client address', () => {
  it('is read from X-Forwarded-For only through SVC_TRUSTED_PROXIES', async () => {
    // Through the trusted proxy, each client has its own bucket, whatever the proxy's address.
    for (let i = 0; i < 40; i += 1)
      await gqlFrom('127.0.0.9', SIGN_IN, { key: randomKey() }, { 'x-forwarded-for': '198.51.100.1' });
    const abuser = await gqlFrom('127.0.0.9', SIGN_IN, { key: h.team.key }, { 'x-forwarded-for': '198.51.100.1' });
    expect(codeOf(abuser)).toBe('rate_limited');
    const other = await gqlFrom('127.0.0.9', SIGN_IN, { key: h.team.key }, { 'x-forwarded-for': '198.51.100.2' });
    expect(other.body.data.createConsoleSession).toBeTruthy();
    // From anywhere else the header is ignored: a client cannot name a fresh address for each attempt.
    for (let i = 0; i < 40; i += 1)
      await gqlFrom('127.0.0.10', SIGN_IN, { key: randomKey() }, { 'x-forwarded-for': `198.51.100.${i + 10}` });
    const spoofed = await gqlFrom('127.0.0.10', SIGN_IN, { key: h.team.key }, { 'x-forwarded-for': '198.51.100.99' });
    expect(codeOf(spoofed)).toBe('rate_limited');
  });

  it('trusts only well-formed addresses and blocks, and stops the start naming a wrong one', () => {
    expect(
      readServerConfig({ SVC_TRUSTED_PROXIES: ' 10.0.0.5, 10.1.0.0/16,fd00::/8 ' }, 'local').trustedProxies,
    ).toEqual(['10.0.0.5', '10.1.0.0/16', 'fd00::/8']);
    for (const wrong of ['10.0.0.0/33', 'console', '10.0.0.5/8/1', '::1/129'])
      expect(() => readServerConfig({ SVC_TRUSTED_PROXIES: wrong }, 'local'), wrong).toThrow(
        `SVC_TRUSTED_PROXIES: "${wrong}" is not an IP address or a CIDR block`,
      );
  });

  it('groups IPv6 addresses by their /64 block', () => {
    expect(addressBucketKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucketKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressBucketKey('2001:DB8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucketKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressBucketKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(addressBucketKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressBucketKey('192.0.2.1')).toBe('192.0.2.1');
  });
});

describe('memory buckets', () => {
  it('refill on the real clock', async () => {
    const buckets = new MemoryBuckets({ rate: 10, burst: 2 }, systemClock);
    buckets.take('a');
    buckets.take('a');
    expect(() => buckets.take('a')).toThrow(
      expect.objectContaining({ code: 'rate_limited', details: { retryAfter: 1 } }),
    );
    buckets.take('b');
    await new Promise((resolve) => setTimeout(resolve, 150));
    buckets.take('a');
    expect(() => buckets.take('a')).toThrow(expect.objectContaining({ code: 'rate_limited' }));
  });

  it('keep at most their number of keys, forgetting the least recently used', () => {
    const buckets = new MemoryBuckets({ rate: 0.001, burst: 1 }, systemClock, 3);
    for (const key of ['a', 'b', 'c']) buckets.take(key);
    expect(() => buckets.take('a')).toThrow();
    buckets.take('d');
    // 'b' was the least recently used: forgotten, it starts again with a full bucket.
    buckets.take('b');
    expect(() => buckets.take('a')).toThrow();
  });
});
