import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack();
});
afterAll(async () => {
  await stack.close();
});

describe('delivery engine', () => {
  const h = () => stack.h;
  it('delivers the exact bytes, signed so the standardwebhooks library verifies them, and the message succeeds', async () => {
    const { tenantId, secret, endpointId } = await stack.setup('/ok');
    const message = await h().request('POST', '/messages', {
      idempotencyKey: 'deliver-1',
      body: `{"tenant_id":"${tenantId}","event_type":"order.created","payload":{ "b": 1.0e2, "a": "é" }}`,
      raw: true,
    });
    expect(message.status, message.text).toBe(202);
    const got = await stack.until('the delivery', () => stack.received.find((r) => r.path === '/ok'));
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
    const done = await stack.until('succeeded', async () => {
      const r = await h().request('GET', `/messages/${message.json.id}`);
      return r.json.status === 'succeeded' ? r.json : undefined;
    });
    expect(done.delivery_counts.succeeded).toBe(1);
    const attempts = await h().services.db.query(
      'SELECT number, trigger, status_code FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1',
      [endpointId],
    );
    expect(attempts).toEqual([{ number: 1, trigger: 'scheduled', status_code: 200 }]);
  });

  it('retries a 500 after the endpoint delay (moved on with the clock) and keeps the webhook-id', async () => {
    stack.script.set('/flaky', [500, 200]);
    const { tenantId } = await stack.setup('/flaky', { retry_delays_seconds: [1, 1] });
    const message = await post(h(), '/messages', {
      tenant_id: tenantId,
      event_type: 'order.created',
      payload: { n: 1 },
    });
    await stack.until('first attempt', () => stack.received.find((r) => r.path === '/flaky'));
    await stack.until('retry_wait', async () => {
      const r = await h().request('GET', `/messages/${message.json.id}`);
      return r.json.delivery_counts.retry_wait === 1 ? true : undefined;
    });
    h().clock.advance(1500);
    const done = await stack.until('succeeded', async () => {
      const r = await h().request('GET', `/messages/${message.json.id}`);
      return r.json.status === 'succeeded' ? r.json : undefined;
    });
    expect(done.delivery_counts.succeeded).toBe(1);
    const flaky = stack.received.filter((r) => r.path === '/flaky');
    expect(flaky).toHaveLength(2);
    expect(flaky[1]!.headers['webhook-id']).toBe(flaky[0]!.headers['webhook-id']);
    expect(flaky[1]!.headers['svc-attempt-id']).not.toBe(flaky[0]!.headers['svc-attempt-id']);
  });

  it('fails a 400 at once without retry and emits webhooks.delivery.failed', async () => {
    stack.script.set('/bad', [400]);
    const { tenantId } = await stack.setup('/bad');
    const message = await post(h(), '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: {} });
    const done = await stack.until('failed', async () => {
      const r = await h().request('GET', `/messages/${message.json.id}`);
      return r.json.status === 'failed' ? r.json : undefined;
    });
    expect(done.delivery_counts.failed).toBe(1);
    expect(stack.received.filter((r) => r.path === '/bad')).toHaveLength(1);
    await stack.eventsUntil('webhooks.delivery.failed', (data) => data['message_id'] === message.json.id);
  });

  it('disables the endpoint on 410, cancels its waiting deliveries and emits webhooks.endpoint.disabled', async () => {
    stack.script.set('/gone', [410]);
    const { tenantId, endpointId } = await stack.setup('/gone', { status: 'enabled' });
    const first = await post(h(), '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: 1 });
    await stack.until('disabled', async () => {
      const r = await h().request('GET', `/endpoints/${endpointId}`);
      return r.json.status === 'disabled' ? r.json : undefined;
    });
    const endpoint = await h().request('GET', `/endpoints/${endpointId}`);
    expect(endpoint.json.disabled_reason).toBe('endpoint_gone');
    const disabled = await stack.eventsUntil('webhooks.endpoint.disabled', () => true, endpointId);
    expect(disabled).toEqual([{ endpoint_id: endpointId, reason: 'endpoint_gone' }]);
    const message = await h().request('GET', `/messages/${first.json.id}`);
    expect(message.json.status).toBe('failed');
  });
});
