// Where and why an attempt without an HTTP answer failed, each cause from a real failing socket on 127.0.0.1: a
// closed port, a receiver that resets, TLS certificates made here (expired, for another host, untrusted), receivers
// that stall before their headers or in their body, headers too large, and names the safety rules or DNS refuse.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEgressClient, type EgressClient, type EgressOutcome } from './egress-client.js';
import type { UrlPolicy } from './host-policy.js';
import type { LookupFn } from './resolve.js';
import { issueServerCertificate, makeTestCa, type TestCertificate } from './testing/certificates.js';
import { httpReceiver, httpsReceiver, tcpReceiver, type Receiver } from './testing/receivers.js';

const LOOPBACK: UrlPolicy = { allowLoopback: true, serviceHosts: ['svc.example'] };
const STRICT: UrlPolicy = { allowLoopback: false, serviceHosts: ['svc.example'] };
const BODY = Buffer.from('{"type":"invoice.paid"}');

const receivers: Receiver[] = [];
const clients: EgressClient[] = [];
let ca: TestCertificate;

beforeAll(async () => {
  ca = await makeTestCa();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(start: Promise<Receiver>): Promise<Receiver> {
  const started = await start;
  receivers.push(started);
  return started;
}

function client(options: Partial<Parameters<typeof createEgressClient>[0]> = {}): EgressClient {
  const lookup: LookupFn = async (host) => {
    if (host === 'hooks.test.example.') return ['127.0.0.1'];
    throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };
  const created = createEgressClient({ policy: LOOPBACK, lookup, ca: ca.cert, ...options });
  clients.push(created);
  return created;
}

function post(egress: EgressClient, url: string, timeoutMs = 2_000): Promise<EgressOutcome> {
  return egress.post({ url, headers: { 'content-type': 'application/json' }, body: BODY, timeoutMs });
}

function detailOf(outcome: EgressOutcome) {
  if (outcome.kind === 'response') throw new Error(`expected a failure, got HTTP ${outcome.status}`);
  expect(outcome.detail).not.toBeNull();
  return outcome.detail!;
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('failure detail: connecting', () => {
  it('a closed port is refused in the connect phase, with the address dialled and the time it took', async () => {
    const port = await closedPort();
    const outcome = await post(client(), `http://127.0.0.1:${port}/hook`);
    expect(outcome.kind).toBe('network_error');
    const detail = detailOf(outcome);
    expect(detail).toMatchObject({ phase: 'connect', cause: 'refused', code: 'ECONNREFUSED', address: '127.0.0.1' });
    expect(detail.port).toBe(port);
    expect(detail.connectionReused).toBe(false);
    // An IP address in the URL is not looked up; the connect phase ended with the refusal.
    expect(detail.timings.dnsMs).toBeNull();
    expect(detail.timings.connectMs).toBeGreaterThanOrEqual(0);
    expect(detail.timings.tlsMs).toBeNull();
    expect(detail.timings.firstByteMs).toBeNull();
    expect(detail.timings.totalMs).toBe(outcome.durationMs);
  });

  it('a name that does not exist fails in the dns phase as no_such_host; a name timing out as timeout', async () => {
    const missing = detailOf(await post(client(), 'http://nowhere.test.example/hook'));
    expect(missing).toMatchObject({ phase: 'dns', cause: 'no_such_host', code: 'ENOTFOUND', address: null });
    expect(missing.timings.dnsMs).toBeGreaterThanOrEqual(0);
    expect(missing.timings.connectMs).toBeNull();

    const silent = client({ lookup: () => new Promise<string[]>(() => undefined), connectTimeoutMs: 300 });
    const started = Date.now();
    const stalled = detailOf(await post(silent, 'http://slow.test.example/hook'));
    expect(stalled).toMatchObject({ phase: 'dns', cause: 'timeout', address: null });
    expect(stalled.timings.dnsMs).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('a name resolving to a private address is refused after resolution, naming that address', async () => {
    const lookup: LookupFn = async () => ['93.184.216.34', '10.1.2.3'];
    const outcome = await post(client({ policy: STRICT, lookup }), 'https://partner.test.example/hook');
    expect(outcome).toMatchObject({ kind: 'unsafe_destination', resolvesToPrivateAddress: true });
    const detail = detailOf(outcome);
    expect(detail).toMatchObject({ phase: 'dns', cause: 'unsafe_address', address: '10.1.2.3', code: null });
    expect(detail.timings.connectMs).toBeNull();
  });
});

describe('failure detail: TLS, with certificates made here', () => {
  it('an expired certificate from a trusted authority fails in the tls phase as certificate_expired', async () => {
    const DAY = 86_400_000;
    const expired = await issueServerCertificate(ca, {
      names: ['hooks.test.example'],
      notBefore: new Date(Date.now() - 30 * DAY),
      notAfter: new Date(Date.now() - DAY),
    });
    const target = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end(), expired));
    const outcome = await post(client(), `https://hooks.test.example:${target.port}/hook`);
    expect(outcome.kind).toBe('tls_error');
    const detail = detailOf(outcome);
    expect(detail).toMatchObject({ phase: 'tls', cause: 'certificate_expired', code: 'CERT_HAS_EXPIRED' });
    expect(detail).toMatchObject({ address: '127.0.0.1', port: target.port });
    expect(detail.timings.dnsMs).toBeGreaterThanOrEqual(0);
    expect(detail.timings.connectMs).toBeGreaterThanOrEqual(0);
    expect(detail.timings.tlsMs).toBeGreaterThanOrEqual(0);
    expect(target.requests).toHaveLength(0);
  });

  it('a certificate for another host fails as certificate_wrong_host; an unknown authority as untrusted', async () => {
    const other = await issueServerCertificate(ca, { names: ['other.test.example'] });
    const wrongHost = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end(), other));
    const detail = detailOf(await post(client(), `https://hooks.test.example:${wrongHost.port}/hook`));
    expect(detail).toMatchObject({
      phase: 'tls',
      cause: 'certificate_wrong_host',
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });

    const stranger = await issueServerCertificate(await makeTestCa(), { names: ['hooks.test.example'] });
    const untrusted = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end(), stranger));
    const unknown = detailOf(await post(client(), `https://hooks.test.example:${untrusted.port}/hook`));
    expect(unknown).toMatchObject({ phase: 'tls', cause: 'certificate_untrusted' });
  });

  it('a server that accepts and never answers the handshake: tls phase, timeout, whichever deadline fires', async () => {
    const silent = await receiver(tcpReceiver(() => undefined));
    // The connect deadline (300 ms) fires first: the connector hands its trace on with its error.
    const byConnect = detailOf(await post(client({ connectTimeoutMs: 300 }), `https://127.0.0.1:${silent.port}/`));
    expect(byConnect).toMatchObject({ phase: 'tls', cause: 'timeout', code: 'UND_ERR_CONNECT_TIMEOUT' });
    expect(byConnect.timings.connectMs).toBeGreaterThanOrEqual(0);
    expect(byConnect.timings.tlsMs).toBeGreaterThanOrEqual(250);

    // The attempt's deadline (300 ms) fires first: the request never had a connection; the one being made for its
    // host is where it was waiting.
    const outcome = await post(client({ connectTimeoutMs: 1_000 }), `https://127.0.0.1:${silent.port}/`, 300);
    expect(outcome.kind).toBe('timeout');
    expect(detailOf(outcome)).toMatchObject({ phase: 'tls', cause: 'timeout', code: null, address: '127.0.0.1' });
  });

  it('a server that is not TLS fails the handshake', async () => {
    const plain = await receiver(tcpReceiver((socket) => socket.end('HTTP/1.1 200 OK\r\n\r\n')));
    const detail = detailOf(await post(client(), `https://127.0.0.1:${plain.port}/hook`));
    expect(detail.phase).toBe('tls');
    expect(['handshake_failed', 'closed', 'reset']).toContain(detail.cause);
  });
});

describe('failure detail: after connecting', () => {
  it('a receiver that resets the connection once the request arrived: request phase, reset', async () => {
    const target = await receiver(tcpReceiver((socket) => socket.once('data', () => socket.resetAndDestroy())));
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/hook`);
    expect(outcome.kind).toBe('network_error');
    const detail = detailOf(outcome);
    expect(detail).toMatchObject({ phase: 'request', cause: 'reset', code: 'ECONNRESET', address: '127.0.0.1' });
    expect(detail.timings.connectMs).toBeGreaterThanOrEqual(0);
    expect(detail.timings.firstByteMs).toBeNull();
  });

  it('a receiver that never sends its headers: request phase, timeout, after the deadline', async () => {
    const target = await receiver(tcpReceiver(() => undefined));
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/hook`, 400);
    expect(outcome.kind).toBe('timeout');
    const detail = detailOf(outcome);
    expect(detail).toMatchObject({ phase: 'request', cause: 'timeout', address: '127.0.0.1', port: target.port });
    expect(detail.timings.firstByteMs).toBeNull();
    expect(detail.timings.totalMs).toBeGreaterThanOrEqual(380);
  });

  it('a receiver that stalls in its body: response phase, timeout, with the time to the first byte', async () => {
    const target = await receiver(
      httpReceiver((_req, res) => {
        res.writeHead(200, { 'content-length': '100' });
        res.write('partial');
      }),
    );
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/hook`, 400);
    expect(outcome.kind).toBe('timeout');
    const detail = detailOf(outcome);
    expect(detail).toMatchObject({ phase: 'response', cause: 'timeout' });
    expect(detail.timings.firstByteMs).not.toBeNull();
    expect(detail.timings.firstByteMs!).toBeLessThan(detail.timings.totalMs);
  });

  it('response headers over the client limit: response too large', async () => {
    const target = await receiver(
      tcpReceiver((socket) =>
        socket.once('data', () => socket.end(`HTTP/1.1 200 OK\r\nx-padding: ${'a'.repeat(70_000)}\r\n\r\n`)),
      ),
    );
    const outcome = await post(client(), `http://127.0.0.1:${target.port}/hook`);
    expect(outcome.kind).toBe('network_error');
    expect(detailOf(outcome)).toMatchObject({
      phase: 'response',
      cause: 'too_large',
      code: 'UND_ERR_HEADERS_OVERFLOW',
    });
  });

  it('a request over a kept-alive connection says so and leaves the connection timings out', async () => {
    // Answers the first request on a connection, resets at the second (a request may arrive in several chunks).
    const target = await receiver(
      tcpReceiver((socket) => {
        let requests = 0;
        socket.on('data', (chunk: Buffer) => {
          if (!chunk.toString('latin1').startsWith('POST ')) return;
          requests += 1;
          if (requests === 1) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nkeep-alive: timeout=5\r\n\r\n');
          else socket.resetAndDestroy();
        });
      }),
    );
    const egress = client();
    expect(await post(egress, `http://127.0.0.1:${target.port}/hook`)).toMatchObject({ kind: 'response', status: 200 });
    // undici returns the connection to its pool once the response has been read to its end, on a later tick.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const detail = detailOf(await post(egress, `http://127.0.0.1:${target.port}/hook`));
    expect(target.connections).toBe(1);
    expect(detail).toMatchObject({ phase: 'request', cause: 'reset', connectionReused: true, address: '127.0.0.1' });
    expect(detail.timings).toMatchObject({ dnsMs: null, connectMs: null, tlsMs: null });
  });
});

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
