import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, type Harness } from '../../../server/src/testing/harness.js';
import { startWorker, type RunningWorker } from '../worker.js';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

let h: Harness;
let worker: RunningWorker;
let receiver: http.Server;
let base: string;
const received: Received[] = [];
/** Per path: the statuses to answer in turn (the last one repeats); default 200. */
const script = new Map<string, number[]>();

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) });
      const statuses = script.get(request.url ?? '') ?? [200];
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      response.writeHead(status, status === 429 ? { 'retry-after': '1' } : {}).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  worker = await startWorker({
    databaseUrl: h.databaseUrl,
    services: h.services,
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    maxIdleMs: 100,
  });
  await post(h, '/event_types', { name: 'order.created' });
});
afterAll(async () => {
  await worker.stop();
  receiver.close();
  await h.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function setup(path: string, extra: Record<string, unknown> = {}) {
  const tenant = await post(h, '/tenants', { external_id: `t-${path.slice(1)}`, name: path });
  const endpoint = await post(h, '/endpoints', { tenant_id: tenant.json.id, url: `${base}${path}`, ...extra });
  expect(endpoint.status, endpoint.text).toBe(201);
  return {
    tenantId: tenant.json.id as string,
    endpointId: endpoint.json.id as string,
    secret: endpoint.json.signing_secret as string,
  };
}

describe('delivery engine', () => {
  it('delivers the exact bytes, signed so the standardwebhooks library verifies them, and the message succeeds', async () => {
    const { tenantId, secret, endpointId } = await setup('/ok');
    const message = await h.request('POST', '/messages', {
      idempotencyKey: 'deliver-1',
      body: `{"tenant_id":"${tenantId}","event_type":"order.created","payload":{ "b": 1.0e2, "a": "é" }}`,
      raw: true,
    });
    expect(message.status, message.text).toBe(202);
    const got = await until('the delivery', () => received.find((r) => r.path === '/ok'));
    expect(got.body.toString('utf8')).toBe('{"b":1.0e2,"a":"é"}');
    expect(got.headers['webhook-id']).toBe(message.json.id);
    expect(got.headers['svc-event-type']).toBe('order.created');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toMatch(/^Svc-Webhooks\/1\.0 \(\+.+\)$/);
    expect(String(got.headers['svc-delivery-id'])).toMatch(/^wdd_/);
    expect(String(got.headers['svc-attempt-id'])).toMatch(/^wda_/);
    const verified = new Webhook(secret.slice('whsec_'.length)).verify(got.body.toString('utf8'), {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    });
    expect(verified).toEqual({ b: 100, a: 'é' });
    const done = await until('succeeded', async () => {
      const r = await h.request('GET', `/messages/${message.json.id}`);
      return r.json.status === 'succeeded' ? r.json : undefined;
    });
    expect(done.delivery_counts.succeeded).toBe(1);
    const attempts = await h.services.db.query(
      'SELECT number, trigger, status_code FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1',
      [endpointId],
    );
    expect(attempts).toEqual([{ number: 1, trigger: 'scheduled', status_code: 200 }]);
  });

  it('retries a 500 after the endpoint delay (moved on with the clock) and keeps the webhook-id', async () => {
    script.set('/flaky', [500, 200]);
    const { tenantId } = await setup('/flaky', { retry_delays_seconds: [1, 1] });
    const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: { n: 1 } });
    await until('first attempt', () => received.find((r) => r.path === '/flaky'));
    await until('retry_wait', async () => {
      const r = await h.request('GET', `/messages/${message.json.id}`);
      return r.json.delivery_counts.retry_wait === 1 ? true : undefined;
    });
    h.clock.advance(1500);
    const done = await until('succeeded', async () => {
      const r = await h.request('GET', `/messages/${message.json.id}`);
      return r.json.status === 'succeeded' ? r.json : undefined;
    });
    expect(done.delivery_counts.succeeded).toBe(1);
    const flaky = received.filter((r) => r.path === '/flaky');
    expect(flaky).toHaveLength(2);
    expect(flaky[1]!.headers['webhook-id']).toBe(flaky[0]!.headers['webhook-id']);
    expect(flaky[1]!.headers['svc-attempt-id']).not.toBe(flaky[0]!.headers['svc-attempt-id']);
  });

  it('fails a 400 at once without retry and emits webhooks.delivery.failed', async () => {
    script.set('/bad', [400]);
    const { tenantId } = await setup('/bad');
    const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: {} });
    const done = await until('failed', async () => {
      const r = await h.request('GET', `/messages/${message.json.id}`);
      return r.json.status === 'failed' ? r.json : undefined;
    });
    expect(done.delivery_counts.failed).toBe(1);
    expect(received.filter((r) => r.path === '/bad')).toHaveLength(1);
    const failed = await h.request('GET', '/events?type=webhooks.delivery.failed');
    expect(
      failed.json.data.some((e: { data: Record<string, unknown> }) => e.data['message_id'] === message.json.id),
    ).toBe(true);
  });

  it('disables the endpoint on 410, cancels its waiting deliveries and emits webhooks.endpoint.disabled', async () => {
    script.set('/gone', [410]);
    const { tenantId, endpointId } = await setup('/gone', { status: 'enabled' });
    const first = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: 1 });
    await until('disabled', async () => {
      const r = await h.request('GET', `/endpoints/${endpointId}`);
      return r.json.status === 'disabled' ? r.json : undefined;
    });
    const endpoint = await h.request('GET', `/endpoints/${endpointId}`);
    expect(endpoint.json.disabled_reason).toBe('endpoint_gone');
    const disabled = await h.request('GET', `/events?type=webhooks.endpoint.disabled&resource_id=${endpointId}`);
    expect(disabled.json.data).toHaveLength(1);
    expect(disabled.json.data[0].data).toEqual({ endpoint_id: endpointId, reason: 'endpoint_gone' });
    const message = await h.request('GET', `/messages/${first.json.id}`);
    expect(message.json.status).toBe('failed');
  });
});
