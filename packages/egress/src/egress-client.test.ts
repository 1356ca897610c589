// The delivery client against real hostile receivers on 127.0.0.1 (policy.allowLoopback), and the strict
// policy refusing private destinations before any connection is made.
import { gzipSync } from 'node:zlib';
import { generateSecret, signPayload } from '@svc/signing';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildDeliveryHeaders } from './delivery-headers.js';
import { createEgressClient, MAX_RESPONSE_BODY_BYTES, type EgressClient, type EgressOutcome } from './egress-client.js';
import type { UrlPolicy } from './host-policy.js';
import type { LookupFn } from './resolve.js';
import { httpReceiver, httpsReceiver, tcpReceiver, TLS_CERT, type Receiver } from './testing/receivers.js';

const LOOPBACK: UrlPolicy = { allowLoopback: true, serviceHosts: ['svc.example'] };
const STRICT: UrlPolicy = { allowLoopback: false, serviceHosts: ['svc.example'] };

/** A fixed DNS table that records the names it was asked for. */
function fakeDns(answers: Record<string, string[]>): LookupFn & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<string[]> => {
    asked.push(host);
    const found = answers[host];
    if (found === undefined) throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return Object.assign(lookup, { asked });
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };
const BODY = Buffer.from('{"type":"invoice.paid","id":1}');

const receivers: Receiver[] = [];
const clients: EgressClient[] = [];

async function receiver(start: Promise<Receiver>): Promise<Receiver> {
  const started = await start;
  receivers.push(started);
  return started;
}

function client(options: Partial<Parameters<typeof createEgressClient>[0]> = {}): EgressClient {
  const created = createEgressClient({ policy: LOOPBACK, lookup: fakeDns({}), ...options });
  clients.push(created);
  return created;
}

function post(egress: EgressClient, url: string, timeoutMs = 2_000): Promise<EgressOutcome> {
  return egress.post({ url, headers: JSON_HEADERS, body: BODY, timeoutMs });
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((egress) => egress.close()));
  await Promise.all(receivers.splice(0).map((started) => started.close()));
});

describe('egress client: answers', () => {
  it('posts the exact bytes with the given headers and returns a 2xx with its body', async () => {
    const target = await receiver(httpReceiver((_req, res) => res.writeHead(200).end('thanks')));
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/hooks/in?token=a%20b&x=1`);

    expect(outcome).toMatchObject({ kind: 'response', status: 200, retryAfterSeconds: null });
    expect(outcome.kind === 'response' && outcome.body.toString()).toBe('thanks');
    const [received] = target.requests;
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/hooks/in?token=a%20b&x=1');
    expect(received?.body.equals(BODY)).toBe(true);
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers['content-length']).toBe(String(BODY.length));
    // Nothing invites a compressed answer.
    expect(received?.headers['accept-encoding']).toBeUndefined();
  });

  it('returns 410 and other statuses as responses for the engine to judge', async () => {
    const target = await receiver(httpReceiver((_req, res) => res.writeHead(410).end('gone')));
    await expect(post(client(), `http://127.0.0.1:${target.port}/`)).resolves.toMatchObject({
      kind: 'response',
      status: 410,
    });
  });

  it('reads Retry-After in seconds and as an HTTP-date', async () => {
    const nowMs = Date.parse('2030-01-01T00:00:00Z');
    const answers: Array<[number, string]> = [
      [429, '120'],
      [429, new Date(nowMs + 90_000).toUTCString()],
      [503, new Date(nowMs + 30_500).toUTCString().replace('GMT', 'GMT')],
      [429, 'soon'],
    ];
    let next = 0;
    const target = await receiver(
      httpReceiver((_req, res) => {
        const [status, retryAfter] = answers[next++] ?? [500, ''];
        res.writeHead(status, { 'Retry-After': retryAfter }).end();
      }),
    );
    const egress = client({ now: () => nowMs });
    const url = `http://127.0.0.1:${target.port}/`;
    const results = [];
    for (let i = 0; i < answers.length; i += 1) results.push(await post(egress, url));
    expect(
      results.map((outcome) => outcome.kind === 'response' && [outcome.status, outcome.retryAfterSeconds]),
    ).toEqual([
      [429, 120],
      [429, 90],
      [503, 30],
      [429, null],
    ]);
  });

  it.each([301, 302, 307, 308])('returns a %i redirect as it is, and never follows it', async (status) => {
    const elsewhere = await receiver(httpReceiver((_req, res) => res.writeHead(200).end()));
    const redirecting = await receiver(
      httpReceiver((_req, res) => res.writeHead(status, { Location: `http://127.0.0.1:${elsewhere.port}/x` }).end()),
    );
    const outcome = await post(client(), `http://127.0.0.1:${redirecting.port}/`);
    expect(outcome).toMatchObject({ kind: 'response', status });
    expect(redirecting.requests).toHaveLength(1);
    expect(elsewhere.connections).toBe(0);
  });

  it('verifies with the standardwebhooks library at the receiver, during a rotation overlap too', async () => {
    const [current, previous] = [generateSecret(), generateSecret()];
    const verdicts: string[] = [];
    const target = await receiver(
      httpReceiver((req, res, body) => {
        for (const secret of [current, previous]) {
          try {
            new Webhook(secret).verify(body, req.headers as Record<string, string>);
            verdicts.push('verified');
          } catch (error) {
            verdicts.push(String(error));
          }
        }
        res.writeHead(204).end();
      }),
    );
    const timestamp = Math.floor(Date.now() / 1000);
    const body = Buffer.from('{"amount":1.50,"note":"Zoë ✓"}');
    const headers = buildDeliveryHeaders({
      contentType: 'application/json',
      docsUrl: 'https://docs.svc.example/webhooks',
      custom: { 'X-Tenant': 'acme' },
      authorization: 'Bearer receiver-token',
      msgId: 'wdm_01',
      timestamp,
      signature: signPayload({ msgId: 'wdm_01', timestamp, body, secrets: [current, previous] }),
      deliveryId: 'wdd_01',
      attemptId: 'wda_01',
      eventType: 'invoice.paid',
    });
    const outcome = await client().post({ url: `http://127.0.0.1:${target.port}/`, headers, body, timeoutMs: 2_000 });

    expect(outcome).toMatchObject({ kind: 'response', status: 204 });
    expect(verdicts).toEqual(['verified', 'verified']);
    const received = target.requests[0]?.headers;
    expect(received).toMatchObject({
      'user-agent': 'Svc-Webhooks/1.0 (+https://docs.svc.example/webhooks)',
      'x-tenant': 'acme',
      authorization: 'Bearer receiver-token',
      'webhook-id': 'wdm_01',
      'webhook-timestamp': String(timestamp),
      'svc-delivery-id': 'wdd_01',
      'svc-attempt-id': 'wda_01',
      'svc-event-type': 'invoice.paid',
    });
  });
});

describe('egress client: hostile receivers', () => {
  it('gives up on a receiver that never answers at the deadline', async () => {
    const target = await receiver(httpReceiver(() => undefined));
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/?token=s3cret`, 500);
    expect(outcome).toMatchObject({ kind: 'timeout' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(450);
    expect(outcome.durationMs).toBeLessThan(1_500);
    expect(JSON.stringify(outcome)).not.toContain('s3cret');
  });

  it('holds the deadline against a body trickling one byte per second', async () => {
    const timers: NodeJS.Timeout[] = [];
    const target = await receiver(
      httpReceiver((_req, res) => {
        res.writeHead(200, { 'Content-Length': '1000' });
        res.write('x');
        timers.push(setInterval(() => res.write('x'), 1_000));
      }),
    );
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/`, 1_500);
    timers.forEach(clearInterval);
    expect(outcome).toMatchObject({ kind: 'timeout' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(1_400);
    expect(outcome.durationMs).toBeLessThan(2_500);
  });

  it('reads only the first 4 KiB of a 50 MiB answer and hangs up', async () => {
    let flushed = 0;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const total = 50 * 1024 * 1024;
    const target = await receiver(
      httpReceiver((_req, res) => {
        res.writeHead(200, { 'Content-Length': String(total) });
        res.on('error', () => undefined);
        const pump = () => {
          while (flushed < total && !res.destroyed) {
            flushed += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      }),
    );
    const rssBefore = process.memoryUsage().rss;
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/`, 5_000);
    const rssGrowth = process.memoryUsage().rss - rssBefore;

    expect(outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(outcome.kind === 'response' && outcome.body.length).toBe(MAX_RESPONSE_BODY_BYTES);
    expect(outcome.durationMs).toBeLessThan(1_000);
    expect(rssGrowth).toBeLessThan(32 * 1024 * 1024);
    // The receiver could fill the socket buffers, nothing more.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(flushed).toBeLessThan(16 * 1024 * 1024);
  });

  it('keeps a gzip bomb compressed: the bytes as sent, never inflated', async () => {
    const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    expect(bomb.length).toBeGreaterThan(MAX_RESPONSE_BODY_BYTES);
    const target = await receiver(
      httpReceiver((_req, res) => res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(bomb)),
    );
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/`);
    expect(outcome.kind).toBe('response');
    if (outcome.kind !== 'response') return;
    expect(outcome.body.equals(bomb.subarray(0, MAX_RESPONSE_BODY_BYTES))).toBe(true);
  });

  it('reports a connection reset as a network error', async () => {
    const target = await receiver(tcpReceiver((socket) => socket.once('data', () => socket.resetAndDestroy())));
    await expect(post(client(), `http://127.0.0.1:${target.port}/`)).resolves.toMatchObject({
      kind: 'network_error',
      reason: expect.stringMatching(/reset|closed/),
    });
  });

  it('reports a refused connection as a network error', async () => {
    const closed = await receiver(httpReceiver(() => undefined));
    const port = closed.port;
    await closed.close();
    receivers.splice(receivers.indexOf(closed), 1);
    await expect(post(client(), `http://127.0.0.1:${port}/`)).resolves.toMatchObject({
      kind: 'network_error',
      reason: 'connection refused',
    });
  });

  it('reports garbage instead of HTTP as a network error', async () => {
    const target = await receiver(
      tcpReceiver((socket) => socket.once('data', () => socket.end('SSH-2.0-OpenSSH\r\n'))),
    );
    await expect(post(client(), `http://127.0.0.1:${target.port}/`)).resolves.toMatchObject({ kind: 'network_error' });
  });

  it('never delivers to a self-signed certificate', async () => {
    const target = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end()));
    const outcome = await post(client(), `https://127.0.0.1:${target.port}/?token=s3cret`);
    expect(outcome).toMatchObject({ kind: 'tls_error', reason: 'TLS handshake failed (DEPTH_ZERO_SELF_SIGNED_CERT)' });
    expect(target.requests).toHaveLength(0);
    expect(JSON.stringify(outcome)).not.toContain('s3cret');
  });
});

describe('egress client: TLS with pinned addresses', () => {
  it('dials the checked address but verifies the certificate against the host name (SNI)', async () => {
    const target = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end()));
    const dns = fakeDns({ 'hooks.test.example.': ['127.0.0.1'], 'other.test.example.': ['127.0.0.1'] });
    const egress = client({ lookup: dns, ca: TLS_CERT });

    await expect(post(egress, `https://hooks.test.example:${target.port}/`)).resolves.toMatchObject({
      kind: 'response',
      status: 200,
    });
    expect(target.requests[0]?.servername).toBe('hooks.test.example');
    expect(target.requests[0]?.headers.host).toBe(`hooks.test.example:${target.port}`);

    // Same address, a name the certificate does not hold.
    await expect(post(egress, `https://other.test.example:${target.port}/`)).resolves.toMatchObject({
      kind: 'tls_error',
      reason: 'TLS handshake failed (ERR_TLS_CERT_ALTNAME_INVALID)',
    });
    expect(target.requests).toHaveLength(1);
  });

  it('checks an IP literal against the certificate IP without sending a server name', async () => {
    const target = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end()));
    await expect(post(client({ ca: TLS_CERT }), `https://127.0.0.1:${target.port}/`)).resolves.toMatchObject({
      kind: 'response',
      status: 200,
    });
    expect(target.requests[0]?.servername).toBe(false);
  });
});

describe('egress client: connections', () => {
  it('reuses a keep-alive connection, and resolves and checks again for each new connection', async () => {
    const target = await receiver(httpReceiver((_req, res) => res.writeHead(200).end('ok')));
    const dns = fakeDns({ 'hooks.test.example.': ['127.0.0.1'] });
    const egress = client({ lookup: dns });
    const url = `http://hooks.test.example:${target.port}/`;

    for (let i = 0; i < 10; i += 1) await expect(post(egress, url)).resolves.toMatchObject({ status: 200 });
    // undici may open a second connection when the next request comes before the first is marked idle.
    const opened = target.connections;
    expect(opened).toBeLessThanOrEqual(2);
    expect(dns.asked).toHaveLength(opened);

    // The receiver drops its idle connections; the next attempt connects, and so resolves, again.
    target.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(post(egress, url)).resolves.toMatchObject({ status: 200 });
    expect(target.connections).toBe(opened + 1);
    expect(dns.asked).toHaveLength(opened + 1);
    expect(new Set(dns.asked)).toEqual(new Set(['hooks.test.example.']));
  });

  it('runs requests to one origin in parallel over several connections', async () => {
    const waiting: Array<() => void> = [];
    const target = await receiver(
      httpReceiver((_req, res) => {
        waiting.push(() => res.writeHead(200).end());
        if (waiting.length === 4) waiting.splice(0).forEach((answer) => answer());
      }),
    );
    const egress = client();
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () => post(egress, `http://127.0.0.1:${target.port}/`)),
    );
    expect(outcomes.map((outcome) => outcome.kind === 'response' && outcome.status)).toEqual([200, 200, 200, 200]);
    expect(target.connections).toBe(4);
  });

  it('counts name resolution inside the deadline', async () => {
    const never: LookupFn = () => new Promise(() => undefined);
    const outcome = await post(
      client({ lookup: never, connectTimeoutMs: 600 }),
      'http://hooks.test.example:8080/',
      300,
    );
    expect(outcome.kind).toBe('timeout');
    expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
    expect(outcome.durationMs).toBeLessThan(600);
  });

  it('bounds a stalled resolver by the connect timeout too', async () => {
    const never: LookupFn = () => new Promise(() => undefined);
    const outcome = await post(
      client({ lookup: never, connectTimeoutMs: 300 }),
      'http://hooks.test.example:8080/',
      5_000,
    );
    expect(outcome).toMatchObject({ kind: 'timeout', reason: 'connect timed out' });
    expect(outcome.durationMs).toBeLessThan(1_000);
  });

  it('refuses a deadline that is not a positive whole number of milliseconds', async () => {
    const egress = client();
    for (const timeoutMs of [0, -1, 1.5, Number.NaN]) {
      await expect(egress.post({ url: 'http://127.0.0.1:9/', headers: {}, body: BODY, timeoutMs })).rejects.toThrow(
        RangeError,
      );
    }
  });

  it('reports a failed lookup as a network error', async () => {
    await expect(post(client(), 'http://missing.test.example:8080/')).resolves.toEqual({
      kind: 'network_error',
      reason: 'DNS lookup failed (ENOTFOUND)',
      durationMs: expect.any(Number),
      detail: expect.objectContaining({ phase: 'dns', cause: 'no_such_host' }),
    });
  });
});

describe('egress client: strict policy', () => {
  let target: Receiver;
  beforeAll(async () => {
    target = await httpReceiver((_req, res) => res.writeHead(200).end());
  });
  afterAll(async () => {
    await target.close();
  });

  it('refuses 127.0.0.1 without connecting', async () => {
    const outcome = await post(client({ policy: STRICT }), `http://127.0.0.1:${target.port}/`);
    expect(outcome).toMatchObject({
      kind: 'unsafe_destination',
      reason: 'url host is a loopback address',
      resolvesToPrivateAddress: true,
    });
    expect(target.connections).toBe(0);
  });

  it('refuses a name that resolves to 10.x, a private address, without connecting', async () => {
    const dns = fakeDns({ 'hooks.test.example.': ['10.1.2.3'] });
    const outcome = await post(client({ policy: STRICT, lookup: dns }), 'https://hooks.test.example/?token=s3cret');
    expect(outcome).toMatchObject({
      kind: 'unsafe_destination',
      reason: 'host resolves to a private address',
      resolvesToPrivateAddress: true,
    });
    expect(dns.asked).toEqual(['hooks.test.example.']);
    expect(outcome.durationMs).toBeLessThan(500);
    expect(JSON.stringify(outcome)).not.toContain('s3cret');
  });

  it('refuses a name that resolves to loopback among public addresses, without connecting', async () => {
    // Port 443 on loopback is closed here, so a connection attempt would show as a network error instead.
    const dns = fakeDns({ 'rebind.test.example.': ['93.184.216.34', '127.0.0.1'] });
    await expect(post(client({ policy: STRICT, lookup: dns }), 'https://rebind.test.example/')).resolves.toMatchObject({
      kind: 'unsafe_destination',
      reason: 'host resolves to a loopback address',
      resolvesToPrivateAddress: true,
    });
  });

  it('refuses service-owned hosts as a host problem, not a private address', async () => {
    const dns = fakeDns({ 'api.svc.example.': ['93.184.216.34'] });
    await expect(post(client({ policy: STRICT, lookup: dns }), 'https://api.svc.example/')).resolves.toMatchObject({
      kind: 'unsafe_destination',
      resolvesToPrivateAddress: false,
    });
    expect(dns.asked).toEqual([]);
  });
});
