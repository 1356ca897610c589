import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// listen() is tested against the real server and worker (the delivery stack over one test database) and a receiver
// on loopback: the stream, the acknowledgements and the settlement are the service's own.
import { startDeliveryStack, type DeliveryStack } from '../../../apps/worker/src/delivery/delivery.testing.js';
import { newId, systemClock } from '@svc/core';
import { post } from '../../../apps/server/src/testing/harness.js';
import { listen, SvcApiError, type DeliveryOutcome } from './index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Arrival {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** The developer's local handler: records what arrives, answers the statuses it is given in turn (then 200). */
async function localReceiver() {
  const arrivals: Arrival[] = [];
  const statuses: number[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      arrivals.push({ headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(statuses.shift() ?? 200).end('handled');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { arrivals, statuses, url, close: () => new Promise((resolve) => server.close(resolve)) };
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

async function deliveriesOf(messageId: string) {
  const answer = await stack.h.request('GET', `/messages/${messageId}/deliveries`);
  expect(answer.status, answer.text).toBe(200);
  return answer.json.data as { id: string; status: string; attempts: number }[];
}

beforeAll(async () => {
  // The real clock: the receiver checks webhook-timestamp against its own, and retries wait in real time.
  stack = await startDeliveryStack({}, { realClock: true });
  receiver = await localReceiver();
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
    await stack.until('20 deliveries at the local receiver', () => (receiver.arrivals.length >= 20 ? true : undefined));

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
      expect(deliveries).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 1 })]);
    }
    // Batched: never more than 100 at once, and fewer requests than deliveries over a burst of 20.
    expect(ackBatches.reduce((sum, n) => sum + n, 0)).toBe(20);
    expect(Math.max(...ackBatches)).toBeLessThanOrEqual(100);
    expect(ackBatches.length).toBeLessThan(20);
    console.warn(`listen(): 20 deliveries acknowledged in ${ackBatches.length} requests (${ackBatches.join(', ')})`);

    stop.abort();
    await listening;
    receiver.arrivals.length = 0;
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
    expect(deliveries[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    stop.abort();
    await listening;
    receiver.arrivals.length = 0;
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

/** The CLI as a developer runs it: a process of its own, `tsx scripts/listen.ts`. */
function runCli(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/listen.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
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
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.output().stdout).toMatch(/stopped\n$/);
    expect(cli.output().stderr).toBe('');
    receiver.arrivals.length = 0;
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
