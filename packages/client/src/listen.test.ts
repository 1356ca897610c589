import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
// listen() is tested against the real server and worker (the delivery stack over one test database) and a receiver
// on loopback: the stream, the acknowledgements and the settlement are the service's own.
import { startDeliveryStack, type DeliveryStack } from '../../../apps/worker/src/delivery/delivery.testing.js';
import { ListDeliveriesQuery, newId, parseInput, systemClock } from '@svc/core';
import { post } from '../../../apps/server/src/testing/harness.js';
import { listen, SvcApiError, type ConnectionEvent, type DeliveryOutcome } from './index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Arrival {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * The developer's local handler: records what arrives, answers the statuses it is given in turn (then 200), after
 * `delayMs`.
 */
async function localReceiver() {
  const arrivals: Arrival[] = [];
  const statuses: number[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      arrivals.push({ headers: request.headers, body: Buffer.concat(chunks) });
      const status = statuses.shift() ?? 200;
      setTimeout(() => response.writeHead(status).end('handled'), local.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const local = { arrivals, statuses, url, delayMs: 0, close: () => new Promise((resolve) => server.close(resolve)) };
  return local;
}

let stack: DeliveryStack;
let receiver: Awaited<ReturnType<typeof localReceiver>>;

/** A tenant with a stream endpoint (one retry, a second after a failure) and one of its stream tokens. */
async function streamEndpoint(name: string) {
  const tenant = await post(stack.h, '/tenants', { external_id: name, name });
  expect(tenant.status, tenant.text).toBe(201);
  const endpoint = await post(stack.h, '/endpoints', {
    tenant_id: tenant.json.id,
    delivery_mode: 'stream',
    retry_delays_seconds: [1],
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  expect(endpoint.json).toMatchObject({ delivery_mode: 'stream' });
  const token = await post(stack.h, `/endpoints/${endpoint.json.id}/stream-tokens`, { name: 'laptop' });
  expect(token.status, token.text).toBe(201);
  return {
    tenantId: tenant.json.id as string,
    endpointId: endpoint.json.id as string,
    secret: endpoint.json.signing_secret as string,
    token: token.json.token as string,
  };
}

/** A message's deliveries, through the service (polling GET would drain the read bucket). */
async function deliveriesOf(messageId: string) {
  const page = await stack.h.services.deliveries.listDeliveries(
    { actor: stack.h.team },
    parseInput(ListDeliveriesQuery, { message_id: messageId }),
  );
  return page.data;
}

beforeAll(async () => {
  // The real clock: the receiver checks webhook-timestamp against its own, and retries wait in real time.
  stack = await startDeliveryStack({}, { realClock: true });
  receiver = await localReceiver();
});
beforeEach(() => {
  receiver.arrivals.length = 0;
  receiver.statuses.length = 0;
  receiver.delayMs = 0;
});
afterAll(async () => {
  await receiver?.close();
  await stack?.close();
});

describe('listen() against the running server and worker', () => {
  it('forwards each delivery with its headers and exact bytes, acknowledges in batches, and the acks settle them', async () => {
    const { tenantId, endpointId, secret, token } = await streamEndpoint('listen-lib');
    const outcomes: DeliveryOutcome[] = [];
    const ackBatches: number[] = [];
    const stop = new AbortController();
    const listening = listen({
      baseUrl: stack.h.baseUrl,
      endpointId,
      token,
      forward: receiver.url,
      signal: stop.signal,
      onDelivery: (outcome) => outcomes.push(outcome),
      // The real fetch, noting the size of every acknowledgement batch it sends.
      fetch: async (input, init) => {
        if (String(input).endsWith('/stream/acks'))
          ackBatches.push((JSON.parse(String(init?.body)) as { acks: unknown[] }).acks.length);
        return fetch(input, init);
      },
    });

    // Bytes that are not ASCII, and a key order JSON.parse would not keep byte for byte in every runtime.
    const payloads = Array.from({ length: 20 }, (_, i) => ({ order: i, note: `café ☕ №${i}`, z: 1, a: 2 }));
    const published = [];
    for (const payload of payloads) published.push(await stack.publish(tenantId, payload));
    // The receiver notes an arrival before it answers, and listen() reports the outcome once the answer is back: wait
    // for both.
    await stack.until('20 deliveries at the local receiver, and their outcomes', () =>
      receiver.arrivals.length >= 20 && outcomes.length >= 20 ? true : undefined,
    );

    const webhook = new Webhook(secret);
    for (const arrival of receiver.arrivals) {
      const outcome = outcomes.find((o) => o.delivery.headers['webhook-id'] === arrival.headers['webhook-id']);
      expect(outcome, String(arrival.headers['webhook-id'])).toBeDefined();
      // The exact bytes of the stream's delivery, and every header it carried, as a push POST would have them.
      expect(arrival.body.equals(Buffer.from(outcome!.delivery.body))).toBe(true);
      for (const [name, value] of Object.entries(outcome!.delivery.headers))
        if (name !== 'content-length') expect(arrival.headers[name.toLowerCase()], name).toBe(value);
      // Standard Webhooks verification, unchanged, over what the local handler received.
      const plain = Object.fromEntries(Object.entries(arrival.headers).map(([k, v]) => [k, String(v)]));
      expect(() => webhook.verify(arrival.body.toString('utf8'), plain)).not.toThrow();
      expect(outcome!.status).toBe(200);
    }
    expect(new Set(receiver.arrivals.map((a) => a.headers['webhook-id'])).size).toBe(20);

    // The acknowledgements settle every delivery: succeeded, one attempt each.
    for (const messageId of published) {
      const deliveries = await stack.until(`${messageId} settled`, async () => {
        const found = await deliveriesOf(messageId);
        return found.every((d) => d.status === 'succeeded') ? found : undefined;
      });
      expect(deliveries).toEqual([expect.objectContaining({ status: 'succeeded', attempt_count: 1 })]);
    }
    // Batched: every acknowledgement sent once, never more than 100 a request, and several together when they come
    // together (3 in flight at once: the endpoint's max_concurrency; the local handler answers at once).
    expect(ackBatches.reduce((sum, n) => sum + n, 0)).toBe(20);
    expect(Math.max(...ackBatches)).toBeLessThanOrEqual(100);
    expect(Math.max(...ackBatches)).toBeGreaterThan(1);
    console.warn(`listen(): 20 deliveries acknowledged in ${ackBatches.length} requests (${ackBatches.join(', ')})`);

    stop.abort();
    await listening;
  }, 60_000);

  it("acknowledges the local handler's failure: the delivery is retried on the endpoint's delays, same webhook-id", async () => {
    const { tenantId, endpointId, token } = await streamEndpoint('listen-retry');
    receiver.statuses.push(500);
    const stop = new AbortController();
    const listening = listen({
      baseUrl: stack.h.baseUrl,
      endpointId,
      token,
      forward: receiver.url,
      signal: stop.signal,
    });
    const messageId = await stack.publish(tenantId, { retry: true });
    await stack.until('the retry at the local receiver', () => (receiver.arrivals.length >= 2 ? true : undefined));
    const [first, second] = receiver.arrivals;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const deliveries = await stack.until('the retry settled', async () => {
      const found = await deliveriesOf(messageId);
      return found[0]?.status === 'succeeded' ? found : undefined;
    });
    expect(deliveries[0]).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    stop.abort();
    await listening;
  }, 60_000);

  it('reconnects after a lost connection, and gets again what it had not acknowledged (same webhook-id)', async () => {
    const { tenantId, endpointId, token } = await streamEndpoint('listen-reconnect');
    // The connection goes through a loopback TCP proxy this test can cut, as a network or a server restart would.
    const sockets = new Set<net.Socket>();
    const upstream = new URL(stack.h.baseUrl);
    const proxy = net.createServer((client) => {
      const server = net.connect(Number(upstream.port), upstream.hostname);
      for (const socket of [client, server]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const events: ConnectionEvent[] = [];
    const stop = new AbortController();
    const listening = listen({
      baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`,
      endpointId,
      token,
      forward: receiver.url,
      signal: stop.signal,
      reconnectDelayMs: { initial: 100, max: 1000 },
      onConnection: (event) => events.push(event),
    });
    await stack.until('connected', () => (events.some((e) => e.type === 'connected') ? true : undefined));

    // The first delivery is at the local handler (slow to answer) when the connection is cut.
    receiver.delayMs = 1500;
    const first = await stack.publish(tenantId, { n: 0 });
    await stack.until('the first delivery at the handler', () => (receiver.arrivals.length >= 1 ? true : undefined));
    for (const socket of sockets) socket.destroy();
    receiver.delayMs = 0;
    const rest = [];
    for (let n = 1; n <= 4; n += 1) rest.push(await stack.publish(tenantId, { n }));

    for (const messageId of [first, ...rest]) {
      const [delivery] = await stack.until(`${messageId} settled`, async () => {
        const found = await deliveriesOf(messageId);
        return found[0]?.status === 'succeeded' ? found : undefined;
      });
      expect(delivery!.status).toBe('succeeded');
    }
    expect(events.filter((e) => e.type === 'connected').length).toBeGreaterThanOrEqual(2);
    expect(events.some((e) => e.type === 'disconnected')).toBe(true);
    // The one in flight at the cut came again with its webhook-id (its first answer was too late: stale); none lost.
    const ids = receiver.arrivals.map((a) => a.headers['webhook-id']);
    expect(ids.filter((id) => id === first).length).toBe(2);
    expect(new Set(ids)).toEqual(new Set([first, ...rest]));
    expect((await deliveriesOf(first))[0]!.attempt_count).toBe(2);

    stop.abort();
    await listening;
    proxy.close();
  }, 60_000);

  it('stops on abort after acknowledging what the handler was answering (settled with one attempt, not offered again)', async () => {
    const { tenantId, endpointId, token } = await streamEndpoint('listen-stop');
    const stop = new AbortController();
    const listening = listen({
      baseUrl: stack.h.baseUrl,
      endpointId,
      token,
      forward: receiver.url,
      signal: stop.signal,
    });
    receiver.delayMs = 800;
    const messageId = await stack.publish(tenantId, { stop: true });
    await stack.until('the delivery at the handler', () => (receiver.arrivals.length >= 1 ? true : undefined));
    stop.abort();
    await listening;
    const [delivery] = await stack.until('settled', async () => {
      const found = await deliveriesOf(messageId);
      return found[0]?.status === 'succeeded' ? found : undefined;
    });
    expect(delivery!.attempt_count).toBe(1);
  }, 60_000);

  it('rejects with the API error for a bad token and for an unknown endpoint, without retrying', async () => {
    const { endpointId } = await streamEndpoint('listen-refused');
    const badToken = await listen({
      baseUrl: stack.h.baseUrl,
      endpointId,
      token: 'whst_' + 'x'.repeat(43),
      forward: receiver.url,
    }).catch((error: unknown) => error);
    expect(badToken).toBeInstanceOf(SvcApiError);
    expect(badToken).toMatchObject({ status: 401 });
  });
});

/** The CLI as a developer runs it: `npm run listen -- ...` (npm execs tsx, which runs scripts/listen.ts). */
function runCli(args: string[]) {
  // Through npm, in a process group of its own as a shell runs it: a terminal's Ctrl-C signals the whole group.
  const child: ChildProcess = spawn('npm', ['run', '--silent', 'listen', '--', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe('npm run listen (scripts/listen.ts)', () => {
  it('prints a line per delivery and exits 0 on Ctrl-C, with no stack trace', async () => {
    const { tenantId, endpointId, token } = await streamEndpoint('listen-cli');
    const server = stack.h.baseUrl.replace(/\/v1$/, '');
    const cli = runCli(['--endpoint', endpointId, '--token', token, '--forward', receiver.url, '--server', server]);
    await stack.until('the CLI connected', () => (cli.output().stdout.includes('connected to') ? true : undefined));
    const messageId = await stack.publish(tenantId, { cli: true });
    await stack.until('the delivery line', () => (/-> 200 {2}\d+ ms/.test(cli.output().stdout) ? true : undefined));
    expect(cli.output().stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+Z {2}order\.created {2}wdd_\S+ {2}attempt 1 {2}-> 200/m);
    await stack.until('settled', async () =>
      (await deliveriesOf(messageId))[0]?.status === 'succeeded' ? true : undefined,
    );
    process.kill(-cli.child.pid!, 'SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).toMatch(/stopped\n$/);
    expect(cli.output().stderr).toBe('');
  }, 60_000);

  it('says in one line what is wrong: a bad token, an endpoint the token does not open (401), an unreachable server', async () => {
    const { endpointId, token } = await streamEndpoint('listen-cli-errors');
    const server = stack.h.baseUrl.replace(/\/v1$/, '');
    const forward = ['--forward', receiver.url];
    // A loopback port nothing listens on: one the system gave out and took back.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const cases = [
      {
        args: ['--endpoint', endpointId, '--token', `whst_${'x'.repeat(43)}`, '--server', server],
        says: /token was refused .*\(401 /,
      },
      {
        args: ['--endpoint', newId('endpoint', systemClock), '--token', token, '--server', server],
        says: /refused for endpoint wde_\w+ \(401 unauthorized\): check --token and --endpoint/,
      },
      {
        args: ['--endpoint', endpointId, '--token', token, '--server', `http://127.0.0.1:${closedPort}`],
        says: /cannot reach .*ECONNREFUSED/,
      },
    ];
    for (const { args, says } of cases) {
      const cli = runCli([...args, ...forward]);
      expect(await cli.exited).toBe(1);
      const { stderr } = cli.output();
      expect(stderr).toMatch(says);
      expect(stderr.trim().split('\n')).toHaveLength(1);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);
});

describe('the receiver in plain Node (examples/stream-receiver.mjs, shown in docs/streams.md)', () => {
  it('is the code the doc shows, and receives and acknowledges deliveries against the service', async () => {
    const example = readFileSync(path.join(ROOT, 'examples/stream-receiver.mjs'), 'utf8');
    const doc = readFileSync(path.join(ROOT, 'docs/streams.md'), 'utf8');
    expect(doc).toContain(example.slice(example.indexOf('const base =')));

    const { tenantId, endpointId, token } = await streamEndpoint('plain-node');
    const child = spawn(process.execPath, ['examples/stream-receiver.mjs'], {
      cwd: ROOT,
      env: { ...process.env, SVC_URL: stack.h.rootUrl, ENDPOINT_ID: endpointId, SVC_STREAM_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const messageId = await stack.publish(tenantId, { note: 'café' });
      await stack.until('the handler printed it', () => (output.includes(messageId) ? true : undefined));
      expect(output).toContain(`${messageId} {"note":"café"}`);
      const [delivery] = await stack.until('settled', async () => {
        const found = await deliveriesOf(messageId);
        return found[0]?.status === 'succeeded' ? found : undefined;
      });
      expect(delivery!.attempt_count).toBe(1);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
