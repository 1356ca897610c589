import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_FROM, SHOWN_ATTEMPT_COUNT_SQL, shownStatusSql } from '@svc/core';
import { post, startHarness, type Harness } from '../../../server/src/testing/harness.js';
import {
  httpReceiver,
  httpsReceiver,
  tcpReceiver,
  type Receiver,
} from '../../../../packages/egress/src/testing/receivers.js';
import { startWorker, type RunningWorker } from '../worker.js';
import { until } from './processes.js';

/**
 * Hostile receivers against the delivery engine (an in-process worker over the test server, with its manual
 * clock, so that hours-long waits take no time): each misbehaviour ends in the state the spec gives it, nothing
 * is attempted early or at/after expires_at, a hanging endpoint does not hold back the others, and memory and
 * connections stay bounded.
 */
let h: Harness;
let worker: RunningWorker;
const receivers: Receiver[] = [];
let baseline: { rss: number; connections: number; fds: number };

function openFileDescriptors(): number {
  return readdirSync('/proc/self/fd').length;
}

/** This process's TCP sockets (Linux /proc/net/tcp). */
function describeSockets(): { local: number; remote: number; state: string }[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const port = (address: string) => parseInt(address.split(':')[1]!, 16);
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length > 9 && inodes.has(f[9]!))
    .map((f) => ({ local: port(f[1]!), remote: port(f[2]!), state: f[3] === '01' ? 'established' : f[3]! }));
}

async function connectionsToDatabase(): Promise<number> {
  const [row]: { n: string }[] = await h.services.db.query(
    'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()',
  );
  return Number(row!.n);
}

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  worker = await startWorker({
    databaseUrl: h.databaseUrl,
    services: h.services,
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    maxIdleMs: 100,
  });
  await post(h, '/event_types', { name: 'order.created' });
  baseline = {
    rss: process.memoryUsage().rss,
    connections: await connectionsToDatabase(),
    fds: openFileDescriptors(),
  };
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await h?.close();
});

async function receiver<R extends Receiver>(started: Promise<R>): Promise<R> {
  const r = await started;
  receivers.push(r);
  return r;
}

let tenants = 0;
async function endpoint(url: string, extra: Record<string, unknown> = {}) {
  tenants += 1;
  const tenant = await post(h, '/tenants', { external_id: `hostile-${tenants}`, name: `hostile ${tenants}` });
  const created = await post(h, '/endpoints', { tenant_id: tenant.json.id, url, ...extra });
  expect(created.status, created.text).toBe(201);
  return { tenantId: tenant.json.id as string, endpointId: created.json.id as string };
}

async function publish(tenantId: string, payload: unknown = {}, extra: Record<string, unknown> = {}): Promise<string> {
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload, ...extra });
  expect(message.status, message.text).toBe(202);
  return message.json.id as string;
}

interface DeliveryRow {
  id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date;
  expires_at: Date;
  last_error: string | null;
}

async function deliveryOf(messageId: string): Promise<DeliveryRow> {
  const rows: DeliveryRow[] = await h.services.db.query(
    `SELECT d.id, ${shownStatusSql('now()')} AS status, ${SHOWN_ATTEMPT_COUNT_SQL} AS attempt_count, d.next_attempt_at, d.expires_at, d.last_error
       FROM ${DELIVERY_FROM} WHERE d.message_id = $1`,
    [messageId],
  );
  return rows[0]!;
}

async function attemptsOf(messageId: string) {
  return (await h.services.db.query(
    `SELECT a.number, a.started_at, a.created_at, a.duration_ms, a.status_code, a.error_kind
       FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.message_id = $1 ORDER BY a.number`,
    [messageId],
  )) as {
    number: number;
    started_at: Date;
    created_at: Date;
    duration_ms: number;
    status_code: number | null;
    error_kind: string | null;
  }[];
}

function inStatus(messageId: string, status: string, ms = 20_000): Promise<DeliveryRow> {
  return until(
    `${messageId} ${status}`,
    async () => {
      const row = await deliveryOf(messageId);
      return row.status === status ? row : undefined;
    },
    ms,
  );
}

/**
 * The test moves the service clock by hours: the engine compares due times with that clock at least every second,
 * and a wake-up makes it look at once (only the engine's own comparison decides whether an attempt may start).
 */
async function releaseWaitingJobs(): Promise<void> {
  worker.notify();
}

/** Lets the engine run the jobs that are due (used to show that nothing was attempted early). */
async function settleDown(ms = 1500): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describe('hostile receivers', () => {
  it('a hanging endpoint times out and retries after its delay, while other endpoints keep their pace', async () => {
    let hangs = 3;
    const held: http.ServerResponse[] = [];
    const hanging = await receiver(
      httpReceiver((_req, res) => {
        if (hangs > 0) {
          hangs -= 1;
          held.push(res);
          return;
        }
        res.writeHead(200).end();
      }),
    );
    const steady = await receiver(httpReceiver((_req, res) => void res.writeHead(200).end()));
    const slow = await endpoint(`http://127.0.0.1:${hanging.port}/hang`, {
      timeout_seconds: 6,
      max_concurrency: 3,
      retry_delays_seconds: [600],
    });
    const fast = await endpoint(`http://127.0.0.1:${steady.port}/steady`);
    const hung = await Promise.all([0, 1, 2].map((n) => publish(slow.tenantId, n)));
    await until('three requests hanging', () => (hanging.requests.length === 3 ? true : undefined));

    const quick: string[] = [];
    for (let n = 0; n < 20; n += 1) quick.push(await publish(fast.tenantId, n));
    for (const id of quick) await inStatus(id, 'succeeded');
    // All twenty went through while the hanging endpoint still held all of its slots.
    expect(held.filter((res) => !res.writableEnded && !res.destroyed)).toHaveLength(3);
    for (const id of hung) expect((await deliveryOf(id)).status).toBe('in_flight');

    for (const id of hung) await inStatus(id, 'retry_wait');
    for (const id of hung) expect(await attemptsOf(id)).toMatchObject([{ number: 1, error_kind: 'timeout' }]);
    // Due for pg-boss, not for the engine: nothing is attempted before the delay.
    await releaseWaitingJobs();
    await settleDown();
    expect(hanging.requests).toHaveLength(3);
    h.clock.advance(600 * 1.2 * 1000 + 1000);
    await releaseWaitingJobs();
    for (const id of hung) await inStatus(id, 'succeeded');
    expect(hanging.requests).toHaveLength(6);
    expect(new Set(hanging.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set(hung));
  }, 45_000);

  it('a 1 byte/s trickle is cut at the endpoint timeout and retried', async () => {
    let trickles = 1;
    const trickle = await receiver(
      httpReceiver((_req, res) => {
        if (trickles === 0) return void res.writeHead(200).end();
        trickles -= 1;
        res.writeHead(200, { 'content-length': '1000' });
        const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('x')), 1000);
        res.once('close', () => clearInterval(timer));
      }),
    );
    const { tenantId } = await endpoint(`http://127.0.0.1:${trickle.port}/`, {
      timeout_seconds: 2,
      retry_delays_seconds: [60],
    });
    const id = await publish(tenantId);
    await inStatus(id, 'retry_wait');
    const [first] = await attemptsOf(id);
    expect(first).toMatchObject({ number: 1, error_kind: 'timeout', status_code: null });
    expect(first!.duration_ms).toBeGreaterThanOrEqual(1900);
    expect(first!.duration_ms).toBeLessThan(5000);
    h.clock.advance(73_000);
    await releaseWaitingJobs();
    await inStatus(id, 'succeeded');
  });

  it('50 MiB and gzip-bomb responses are cut after 4 KiB: the deliveries succeed, memory stays bounded', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const huge = await receiver(
      httpReceiver((_req, res) => {
        res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) });
        let left = 50 * 1024 * 1024;
        const pump = () => {
          while (left > 0 && !res.destroyed) {
            left -= chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
      }),
    );
    // 64 gzip members of 16 MiB of zeros each: about 1 MiB on the wire, 1 GiB once inflated.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 64 }, () => member));
    const bomber = await receiver(
      httpReceiver((_req, res) => {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' }).end(bomb);
      }),
    );
    const big = await endpoint(`http://127.0.0.1:${huge.port}/huge`);
    const gz = await endpoint(`http://127.0.0.1:${bomber.port}/bomb`);
    const ids = [];
    for (let n = 0; n < 4; n += 1) ids.push(await publish(big.tenantId, n), await publish(gz.tenantId, n));
    for (const id of ids) await inStatus(id, 'succeeded');
    for (const id of ids) expect(await attemptsOf(id)).toMatchObject([{ number: 1, status_code: 200 }]);
    // Four 50 MiB bodies and four 1 GiB bombs: buffering any of them would show.
    expect(process.memoryUsage().rss - baseline.rss).toBeLessThan(150 * 1024 * 1024);
  });

  it('a connection reset is a network error, retried', async () => {
    let resets = 1;
    const answer = http.createServer((_req, res) => void res.writeHead(200).end());
    const resetter = await receiver(
      tcpReceiver((socket: net.Socket) => {
        if (resets === 0) return void answer.emit('connection', socket);
        resets -= 1;
        socket.once('data', () => socket.resetAndDestroy());
      }),
    );
    const { tenantId } = await endpoint(`http://127.0.0.1:${resetter.port}/`, { retry_delays_seconds: [60] });
    const id = await publish(tenantId);
    await inStatus(id, 'retry_wait');
    expect(await attemptsOf(id)).toMatchObject([{ number: 1, error_kind: 'network_error' }]);
    h.clock.advance(73_000);
    await releaseWaitingJobs();
    await inStatus(id, 'succeeded');
    expect(resetter.connections).toBe(2);
  });

  it('a redirect fails at once, without retry, and its target is never called', async () => {
    const target = await receiver(httpReceiver((_req, res) => void res.writeHead(200).end()));
    const redirect = await receiver(
      httpReceiver((req, res) => {
        const status = req.url === '/307' ? 307 : 302;
        res.writeHead(status, { location: `http://127.0.0.1:${target.port}/target` }).end();
      }),
    );
    const ids = [];
    for (const path of ['/302', '/307']) {
      const { tenantId } = await endpoint(`http://127.0.0.1:${redirect.port}${path}`);
      ids.push(await publish(tenantId));
    }
    for (const id of ids) {
      const failed = await inStatus(id, 'failed');
      expect(failed.attempt_count).toBe(1);
    }
    h.clock.advance(3600_000);
    await releaseWaitingJobs();
    await settleDown();
    expect(redirect.requests).toHaveLength(2);
    expect(target.connections).toBe(0);
  });

  it('a self-signed certificate is a TLS error, retried until the attempts run out', async () => {
    const tls = await receiver(httpsReceiver((_req, res) => void res.writeHead(200).end()));
    const { tenantId } = await endpoint(`https://127.0.0.1:${tls.port}/`, { retry_delays_seconds: [60] });
    const id = await publish(tenantId);
    await inStatus(id, 'retry_wait');
    h.clock.advance(73_000);
    await releaseWaitingJobs();
    const failed = await inStatus(id, 'failed');
    // It ended because its attempts ran out (docs/deliveries.md): the last error says so.
    expect(failed.last_error).toBe('tls_error_attempts_exhausted');
    expect((await attemptsOf(id)).map((a) => [a.number, a.error_kind])).toEqual([
      [1, 'tls_error'],
      [2, 'tls_error'],
    ]);
    expect(tls.requests).toHaveLength(0);
    expect(tls.connections).toBe(2);
  });

  it('410 disables the endpoint and cancels its waiting deliveries', async () => {
    const gone = await receiver(httpReceiver((_req, res) => void setTimeout(() => res.writeHead(410).end(), 200)));
    const { tenantId, endpointId } = await endpoint(`http://127.0.0.1:${gone.port}/`, { max_concurrency: 1 });
    const ids = [await publish(tenantId, 1), await publish(tenantId, 2), await publish(tenantId, 3)];
    await until('the endpoint disabled', async () => {
      const r = await h.request('GET', `/endpoints/${endpointId}`);
      return r.json.status === 'disabled' ? r.json : undefined;
    });
    const statuses = [];
    for (const id of ids)
      statuses.push(
        (
          await until('a final state', async () => {
            const row = await deliveryOf(id);
            return ['failed', 'canceled'].includes(row.status) ? row : undefined;
          })
        ).status,
      );
    expect(statuses.sort()).toEqual(['canceled', 'canceled', 'failed']);
    expect(gone.requests).toHaveLength(1);
  });

  it('429 with Retry-After: the retry waits the Retry-After (two hours), not the shorter delay', async () => {
    let limited = 1;
    const busy = await receiver(
      httpReceiver((_req, res) => {
        if (limited-- > 0) return void res.writeHead(429, { 'retry-after': '7200' }).end();
        res.writeHead(200).end();
      }),
    );
    const { tenantId } = await endpoint(`http://127.0.0.1:${busy.port}/`, { retry_delays_seconds: [60] });
    const id = await publish(tenantId);
    const waiting = await inStatus(id, 'retry_wait');
    const [first] = await attemptsOf(id);
    expect(waiting.next_attempt_at.getTime() - first!.created_at.getTime()).toBeGreaterThanOrEqual(7200_000);
    h.clock.advance(3600_000);
    await releaseWaitingJobs();
    await settleDown();
    expect(busy.requests).toHaveLength(1);
    h.clock.advance(3601_000);
    await releaseWaitingJobs();
    await inStatus(id, 'succeeded');
    const [, second] = await attemptsOf(id);
    expect(second!.started_at.getTime() - first!.created_at.getTime()).toBeGreaterThanOrEqual(7200_000);
  });

  it('nothing is attempted at or after expires_at', async () => {
    const failing = await receiver(httpReceiver((_req, res) => void res.writeHead(503, { 'retry-after': '20' }).end()));
    const { tenantId } = await endpoint(`http://127.0.0.1:${failing.port}/`, { retry_delays_seconds: [60, 60, 60] });
    const expiresAt = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();
    // Retried at +60..72 s, then the next retry would start after expires_at: expired instead.
    const windowed = await publish(tenantId, 1, { expires_at: expiresAt(100_000) });
    await inStatus(windowed, 'retry_wait');
    h.clock.advance(80_000);
    await releaseWaitingJobs();
    const expired = await inStatus(windowed, 'expired');
    expect(expired.attempt_count).toBe(2);
    // Due (after the 60 s delay, longer than the Retry-After) only once the window is over: finished unattempted.
    const late = await publish(tenantId, 2, { expires_at: expiresAt(75_000) });
    await inStatus(late, 'retry_wait');
    h.clock.advance(80_000);
    await releaseWaitingJobs();
    await inStatus(late, 'expired');
    expect(await attemptsOf(late)).toHaveLength(1);
    expect(failing.requests).toHaveLength(3);
  });

  it('across every test: each attempt started before expires_at and no earlier than its delay; resources bounded', async () => {
    const attempts: {
      delivery_id: string;
      number: number;
      started_at: Date;
      created_at: Date;
      expires_at: Date;
      retry_delays_seconds: number[];
    }[] = await h.services.db.query(
      `SELECT a.delivery_id, a.number, a.started_at, a.created_at, d.expires_at, e.retry_delays_seconds
         FROM attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN endpoints e ON e.id = d.endpoint_id
        ORDER BY a.delivery_id, a.number`,
    );
    expect(attempts.length).toBeGreaterThan(40);
    for (const [i, attempt] of attempts.entries()) {
      expect(attempt.started_at < attempt.expires_at).toBe(true);
      const previous = attempts[i - 1];
      if (previous?.delivery_id !== attempt.delivery_id) continue;
      const delayMs = attempt.retry_delays_seconds[previous.number - 1]! * 1000;
      expect(attempt.started_at.getTime() - previous.created_at.getTime()).toBeGreaterThanOrEqual(delayMs);
    }
    const open: { status: string }[] = await h.services.db.query(
      `SELECT status FROM deliveries WHERE status NOT IN ('succeeded', 'failed', 'expired', 'canceled')`,
    );
    expect(open).toEqual([]);
    // Bounded by the pools' sizes (server core 8, its pg-boss 2, the worker's pg-boss 4, the wake listener 1).
    expect(await connectionsToDatabase()).toBeLessThanOrEqual(Math.max(baseline.connections, 8 + 2 + 4 + 1));
    // Sockets of cut bodies, bombs, hangs and resets are closed; idle keep-alive ones within a few seconds.
    const ports = new Set(receivers.map((r) => r.port));
    const toReceivers = () => describeSockets().filter((s) => ports.has(s.remote) && s.state === 'established');
    await until(
      'no connection left open to any receiver',
      () => (toReceivers().length === 0 ? true : undefined),
      15_000,
    );
    expect(openFileDescriptors()).toBeLessThanOrEqual(baseline.fds + receivers.length + 20);
  }, 30_000);
});
