import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupFn } from '@svc/egress';
import {
  issueServerCertificate,
  makeTestCa,
  type TestCertificate,
} from '../../../../packages/egress/src/testing/certificates.js';
import {
  httpReceiver,
  httpsReceiver,
  tcpReceiver,
  type Receiver,
} from '../../../../packages/egress/src/testing/receivers.js';
import { post, startHarness, type Harness } from '../../../server/src/testing/harness.js';
import { until } from '../fault/processes.js';
import { startWorker, type RunningWorker } from '../worker.js';

/**
 * Why an attempt without an HTTP answer failed, end to end: real failing sockets on 127.0.0.1, the real worker, the
 * attempt row settlement writes, and what REST (`error_detail`, an extension) and GraphQL (`errorDetail`) show.
 */
let h: Harness;
let worker: RunningWorker;
let ca: TestCertificate;
const receivers: Receiver[] = [];

/** Names for the worker's egress client: one that resolves to a private address, the rest do not exist. */
const lookup: LookupFn = async (host) => {
  if (host === 'inside.test.example.') return ['10.1.2.3'];
  throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

beforeAll(async () => {
  ca = await makeTestCa();
  h = await startHarness({ realClock: true });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  worker = await startWorker({
    databaseUrl: h.databaseUrl,
    services: h.services,
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    maxIdleMs: 100,
    egress: { ca: ca.cert, lookup },
  });
  await post(h, '/event_types', { name: 'order.created' });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await h?.close();
});

async function receiver(started: Promise<Receiver>): Promise<Receiver> {
  const r = await started;
  receivers.push(r);
  return r;
}

let tenants = 0;
/** Publishes one message to a new endpoint at `url` (one attempt, then a retry an hour later) and returns its delivery. */
async function deliverTo(url: string, timeoutSeconds = 10): Promise<string> {
  tenants += 1;
  const tenant = await post(h, '/tenants', { external_id: `detail-${tenants}`, name: `detail ${tenants}` });
  const endpoint = await post(h, '/endpoints', {
    tenant_id: tenant.json.id,
    url,
    retry_delays_seconds: [3600],
    timeout_seconds: timeoutSeconds,
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  const message = await post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'order.created', payload: {} });
  expect(message.status, message.text).toBe(202);
  const list = await h.request('GET', `/deliveries?message_id=${message.json.id}`);
  return list.json.data[0].id as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function firstAttempt(deliveryId: string): Promise<any> {
  return until(
    `the first attempt of ${deliveryId}`,
    async () => {
      const page = await h.request('GET', `/deliveries/${deliveryId}/attempts`);
      expect(page.status, page.text).toBe(200);
      return page.json.data[0];
    },
    20_000,
  );
}

async function gql(query: string, variables: Record<string, unknown>) {
  const response = await fetch(`${h.rootUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.team.key}` },
    body: JSON.stringify({ query, variables }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (await response.json()) as any;
}

const ATTEMPT_DETAIL = `query ($id: ID!) {
  delivery(id: $id) {
    attempts { nodes { errorKind errorDetail { phase cause code address port connectionReused
      timingsMs { dns connect tls firstByte total } } } }
  }
}`;

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const DAY_MS = 86_400_000;

describe('attempt error detail through the worker, REST and GraphQL', () => {
  it('a refused port: connect phase, refused, the address dialled and the phase timings, in REST and GraphQL', async () => {
    const port = await closedPort();
    const deliveryId = await deliverTo(`http://127.0.0.1:${port}/hook`);
    const attempt = await firstAttempt(deliveryId);
    expect(attempt.error_kind).toBe('network_error');
    expect(attempt.error_detail).toEqual({
      phase: 'connect',
      cause: 'refused',
      code: 'ECONNREFUSED',
      address: '127.0.0.1',
      port,
      connection_reused: false,
      timings_ms: {
        dns: null,
        connect: expect.any(Number),
        tls: null,
        first_byte: null,
        total: attempt.duration_ms,
      },
    });

    const answer = await gql(ATTEMPT_DETAIL, { id: deliveryId });
    expect(answer.errors).toBeUndefined();
    expect(answer.data.delivery.attempts.nodes[0]).toEqual({
      errorKind: 'network_error',
      errorDetail: {
        phase: 'connect',
        cause: 'refused',
        code: 'ECONNREFUSED',
        address: '127.0.0.1',
        port,
        connectionReused: false,
        timingsMs: { dns: null, connect: expect.any(Number), tls: null, firstByte: null, total: attempt.duration_ms },
      },
    });
  }, 30_000);

  it('a receiver that resets, and one that stalls before its headers or in its body', async () => {
    const reset = await receiver(tcpReceiver((socket) => socket.once('data', () => socket.resetAndDestroy())));
    const stallHeaders = await receiver(tcpReceiver(() => undefined));
    const stallBody = await receiver(
      httpReceiver((_req, res) => {
        res.writeHead(200, { 'content-length': '100' });
        res.write('partial');
      }),
    );
    const [resetId, headersId, bodyId] = await Promise.all([
      deliverTo(`http://127.0.0.1:${reset.port}/hook`),
      deliverTo(`http://127.0.0.1:${stallHeaders.port}/hook`, 1),
      deliverTo(`http://127.0.0.1:${stallBody.port}/hook`, 1),
    ]);
    const [resetAttempt, headersAttempt, bodyAttempt] = await Promise.all(
      [resetId, headersId, bodyId].map(firstAttempt),
    );
    expect(resetAttempt.error_detail).toMatchObject({ phase: 'request', cause: 'reset', code: 'ECONNRESET' });
    expect(headersAttempt.error_kind).toBe('timeout');
    expect(headersAttempt.error_detail).toMatchObject({ phase: 'request', cause: 'timeout', port: stallHeaders.port });
    expect(headersAttempt.error_detail.timings_ms.first_byte).toBeNull();
    expect(headersAttempt.error_detail.timings_ms.total).toBeGreaterThanOrEqual(950);
    expect(bodyAttempt.error_kind).toBe('timeout');
    expect(bodyAttempt.error_detail).toMatchObject({ phase: 'response', cause: 'timeout' });
    expect(bodyAttempt.error_detail.timings_ms.first_byte).toBeLessThan(bodyAttempt.error_detail.timings_ms.total);

    const answer = await gql(ATTEMPT_DETAIL, { id: bodyId });
    expect(answer.data.delivery.attempts.nodes[0].errorDetail).toMatchObject({ phase: 'response', cause: 'timeout' });
  }, 30_000);

  it('response headers over the client limit: response too large', async () => {
    const huge = await receiver(
      tcpReceiver((socket) =>
        socket.once('data', () => socket.end(`HTTP/1.1 200 OK\r\nx-padding: ${'a'.repeat(70_000)}\r\n\r\n`)),
      ),
    );
    const attempt = await firstAttempt(await deliverTo(`http://127.0.0.1:${huge.port}/hook`));
    expect(attempt.error_kind).toBe('network_error');
    expect(attempt.error_detail).toMatchObject({
      phase: 'response',
      cause: 'too_large',
      code: 'UND_ERR_HEADERS_OVERFLOW',
      address: '127.0.0.1',
    });
  }, 30_000);

  it('TLS certificates made here: expired, and for another host', async () => {
    const expired = await issueServerCertificate(ca, {
      names: ['127.0.0.1'],
      notBefore: new Date(Date.now() - 30 * DAY_MS),
      notAfter: new Date(Date.now() - DAY_MS),
    });
    const otherHost = await issueServerCertificate(ca, { names: ['other.test.example'] });
    const expiredServer = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end(), expired));
    const wrongHostServer = await receiver(httpsReceiver((_req, res) => res.writeHead(200).end(), otherHost));
    const [expiredId, wrongHostId] = await Promise.all([
      deliverTo(`https://127.0.0.1:${expiredServer.port}/hook`),
      deliverTo(`https://127.0.0.1:${wrongHostServer.port}/hook`),
    ]);
    const expiredAttempt = await firstAttempt(expiredId);
    expect(expiredAttempt.error_kind).toBe('tls_error');
    expect(expiredAttempt.error_detail).toMatchObject({
      phase: 'tls',
      cause: 'certificate_expired',
      code: 'CERT_HAS_EXPIRED',
      address: '127.0.0.1',
      port: expiredServer.port,
    });
    expect(expiredAttempt.error_detail.timings_ms.tls).toEqual(expect.any(Number));
    expect((await firstAttempt(wrongHostId)).error_kind).toBe('tls_error');
    const answer = await gql(ATTEMPT_DETAIL, { id: wrongHostId });
    expect(answer.data.delivery.attempts.nodes[0]).toMatchObject({
      errorKind: 'tls_error',
      errorDetail: { phase: 'tls', cause: 'certificate_wrong_host', code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    });
  }, 30_000);

  it('a name that resolves to a private address is refused after resolution, naming the address', async () => {
    const deliveryId = await deliverTo('https://inside.test.example/hook');
    const attempt = await firstAttempt(deliveryId);
    expect(attempt.error_kind).toBe('unsafe_destination');
    expect(attempt.error_detail).toMatchObject({ phase: 'dns', cause: 'unsafe_address', address: '10.1.2.3' });
    const missing = await firstAttempt(await deliverTo('https://missing.test.example/hook'));
    expect(missing.error_detail).toMatchObject({ phase: 'dns', cause: 'no_such_host', code: 'ENOTFOUND' });
  }, 30_000);

  it('an attempt that got an answer has no error_detail in REST and null in GraphQL', async () => {
    const answering = await receiver(httpReceiver((_req, res) => res.writeHead(503).end('busy')));
    const deliveryId = await deliverTo(`http://127.0.0.1:${answering.port}/hook`);
    const attempt = await firstAttempt(deliveryId);
    expect(attempt.status_code).toBe(503);
    expect('error_detail' in attempt).toBe(false);
    const answer = await gql(ATTEMPT_DETAIL, { id: deliveryId });
    expect(answer.data.delivery.attempts.nodes[0]).toEqual({ errorKind: null, errorDetail: null });
  }, 30_000);
});
