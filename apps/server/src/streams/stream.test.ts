import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startDeliveryStack, type DeliveryStack } from '../../../worker/src/delivery/delivery.testing.js';
import { ack, deliveryRecord, FAST_STREAMS, openStream, streamEndpoint } from './stream.testing.js';

let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({}, { realClock: true, serverEnv: FAST_STREAMS });
});
afterAll(async () => {
  await stack.close();
});

describe('a stream endpoint', () => {
  it('streams a delivery exactly as it would be POSTed; a 200 ack settles it succeeded with one attempt', async () => {
    const push = await stack.setup('/push-twin');
    const stream = await streamEndpoint(stack, {}, push.tenantId);
    const client = await openStream(stack, stream);
    expect(client.status).toBe(200);
    const payload = { order: 'ü-42', note: 'caf\u00e9 \u2603', amount: 12.5 };
    await stack.publish(push.tenantId, payload);
    const [event] = await client.waitForDeliveries(1);
    const pushed = await stack.until('the push delivery', () => stack.received.find((r) => r.path === '/push-twin'));

    // The bytes a push receiver got are the bytes the stream carries, signed for the stream endpoint's secret.
    expect(Buffer.from(event!.body!, 'utf8').equals(pushed.body)).toBe(true);
    expect(new Webhook(stream.secret).verify(event!.body!, event!.headers)).toEqual(payload);
    expect(event!.headers['webhook-id']).toBe(pushed.headers['webhook-id']);
    expect(event!.headers['content-type']).toBe(pushed.headers['content-type']);
    expect(event!.headers['user-agent']).toMatch(/^Svc-Webhooks\/1\.0 \(\+http/);
    expect(event!.headers['svc-event-type']).toBe('order.created');
    expect(event!.headers['svc-delivery-id']).toBe(event!.delivery_id);
    expect(event!.attempt).toBe(1);
    expect(client.events[0]!.id).toBe(`${event!.delivery_id}.1`);

    const acked = await ack(stack, stream, [{ delivery_id: event!.delivery_id, attempt: 1, status: 200 }]);
    expect(acked).toEqual({ status: 200, json: { results: [{ delivery_id: event!.delivery_id, result: 'settled' }] } });
    const record = await deliveryRecord(stack, event!.delivery_id);
    expect(record.status).toBe('succeeded');
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]).toMatchObject({ number: 1, status_code: 200, error_kind: null });
    const api = await stack.h.request('GET', `/deliveries/${event!.delivery_id}`);
    expect(api.json).toMatchObject({ status: 'succeeded' });
    // The same answer again is stale: the attempt is settled.
    const again = await ack(stack, stream, [{ delivery_id: event!.delivery_id, attempt: 1, status: 200 }]);
    expect(again.json.results![0]!.result).toBe('stale');
    // The push engine never POSTed the stream endpoint's delivery: the receiver saw the push twin only.
    expect(stack.received.filter((r) => r.headers['webhook-id'] === pushed.headers['webhook-id'])).toHaveLength(1);
    client.close();
  });

  it('offers an unacknowledged delivery again after the visibility timeout, as a timeout attempt, same webhook-id', async () => {
    const stream = await streamEndpoint(stack, { timeout_seconds: 1, retry_delays_seconds: [1, 1] });
    const client = await openStream(stack, stream);
    await stack.publish(stream.tenantId, { n: 1 });
    const [first] = await client.waitForDeliveries(1);
    const offeredAt = Date.now();
    const [, second] = await client.waitForDeliveries(2, 10_000);
    const waited = Date.now() - offeredAt;
    // The lease (1 s) and the first retry delay (1 s, up to 20% more) pass before it comes again.
    expect(waited).toBeGreaterThanOrEqual(1900);
    expect(waited).toBeLessThan(6000);
    expect(second!.delivery_id).toBe(first!.delivery_id);
    expect(second!.attempt).toBe(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    // Answering the first attempt now is stale; the second settles.
    const late = await ack(stack, stream, [
      { delivery_id: first!.delivery_id, attempt: 1, status: 200 },
      { delivery_id: second!.delivery_id, attempt: 2, status: 200 },
    ]);
    expect(late.json.results!.map((r) => r.result)).toEqual(['stale', 'settled']);
    const record = await deliveryRecord(stack, first!.delivery_id);
    expect(record.status).toBe('succeeded');
    expect(record.attempts.map((a) => [a.number, a.error_kind, a.status_code])).toEqual([
      [1, 'timeout', null],
      [2, null, 200],
    ]);
    client.close();
  });

  it("follows the endpoint's retry delays after a 500 acknowledgement", async () => {
    const stream = await streamEndpoint(stack, { retry_delays_seconds: [2, 1] });
    const client = await openStream(stack, stream);
    await stack.publish(stream.tenantId, { n: 2 });
    const [first] = await client.waitForDeliveries(1);
    const answeredAt = Date.now();
    const failed = await ack(stack, stream, [{ delivery_id: first!.delivery_id, attempt: 1, status: 500 }]);
    expect(failed.json.results![0]!.result).toBe('settled');
    expect((await deliveryRecord(stack, first!.delivery_id)).status).toBe('retry_wait');
    const [, second] = await client.waitForDeliveries(2, 10_000);
    const waited = Date.now() - answeredAt;
    expect(waited).toBeGreaterThanOrEqual(1950);
    expect(waited).toBeLessThan(4000);
    expect(second!.attempt).toBe(2);
    await ack(stack, stream, [{ delivery_id: second!.delivery_id, attempt: 2, status: 'error' }]);
    const [, , third] = await client.waitForDeliveries(3, 10_000);
    expect(third!.attempt).toBe(3);
    await ack(stack, stream, [{ delivery_id: third!.delivery_id, attempt: 3, status: 204 }]);
    const record = await deliveryRecord(stack, first!.delivery_id);
    expect(record.status).toBe('succeeded');
    expect(record.attempts.map((a) => [a.number, a.status_code, a.error_kind])).toEqual([
      [1, 500, null],
      [2, null, 'network_error'],
      [3, 204, null],
    ]);
    client.close();
  });

  it('shares deliveries between two connections, each to one of them, within max_concurrency', async () => {
    const stream = await streamEndpoint(stack, { max_concurrency: 2 });
    const a = await openStream(stack, stream);
    const b = await openStream(stack, stream);
    const connections = await stack.h.request('GET', `/endpoints/${stream.endpointId}/stream-connections`);
    expect(connections.json.data).toHaveLength(2);
    const unacked = new Set<string>();
    let peak = 0;
    const acked = new Set<string>();
    const answer = async (client: typeof a) => {
      for (;;) {
        for (const event of client.deliveries) {
          if (acked.has(event.delivery_id) || unacked.has(event.delivery_id)) continue;
          unacked.add(event.delivery_id);
          peak = Math.max(peak, unacked.size);
          setTimeout(() => {
            void ack(stack, stream, [{ delivery_id: event.delivery_id, attempt: event.attempt, status: 200 }]).then(
              () => {
                unacked.delete(event.delivery_id);
                acked.add(event.delivery_id);
              },
            );
          }, 100);
        }
        if (acked.size >= 12) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    for (let i = 0; i < 12; i += 1) await stack.publish(stream.tenantId, { i });
    await Promise.race([
      Promise.all([answer(a), answer(b)]),
      new Promise((_, reject) => setTimeout(() => reject(new Error('not all acknowledged')), 20_000)),
    ]);
    const all = [...a.deliveries, ...b.deliveries];
    expect(all).toHaveLength(12);
    expect(new Set(all.map((d) => d.delivery_id)).size).toBe(12);
    expect(a.deliveries.length).toBeGreaterThan(0);
    expect(b.deliveries.length).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(2);
    a.close();
    b.close();
  });

  it('offers an ordered endpoint its head only, the next once the head is acknowledged', async () => {
    const stream = await streamEndpoint(stack, { ordering: 'ordered' });
    const client = await openStream(stack, stream);
    for (let i = 0; i < 3; i += 1) await stack.publish(stream.tenantId, { i });
    for (let i = 0; i < 3; i += 1) {
      const events = await client.waitForDeliveries(i + 1);
      // Nothing behind the head comes while it is unacknowledged.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(client.deliveries).toHaveLength(i + 1);
      const head = events[i]!;
      expect(JSON.parse(head.body!)).toEqual({ i });
      expect(Number(head.headers['svc-sequence'])).toBe(i + 1);
      await ack(stack, stream, [{ delivery_id: head.delivery_id, attempt: head.attempt, status: 200 }]);
    }
    client.close();
  });

  it('opens its circuit after ten failures, offers nothing until the probe, and recovers', async () => {
    const stream = await streamEndpoint(stack, { retry_delays_seconds: [3600] });
    const client = await openStream(stack, stream);
    for (let i = 0; i < 10; i += 1) await stack.publish(stream.tenantId, { i });
    const failed = new Set<string>();
    await client.waitFor('ten failed acknowledgements', () => {
      for (const event of client.deliveries)
        if (!failed.has(event.delivery_id)) {
          failed.add(event.delivery_id);
          void ack(stack, stream, [{ delivery_id: event.delivery_id, attempt: event.attempt, status: 503 }]);
        }
      return failed.size >= 10 ? true : undefined;
    });
    await stack.eventsUntil('webhooks.endpoint.failing', (d) => d['endpoint_id'] === stream.endpointId);
    const endpoint = await stack.h.request('GET', `/endpoints/${stream.endpointId}`);
    expect(endpoint.json.health).toMatchObject({ circuit: 'open', consecutive_failures: 10 });
    // Behind the open circuit a new delivery waits.
    await stack.publish(stream.tenantId, { after: true });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(client.deliveries).toHaveLength(10);
    // Resume: one probe now; its success closes the circuit.
    const resumed = await stack.h.request('POST', `/endpoints/${stream.endpointId}/resume`, {
      body: {},
      ifMatch: endpoint.headers.get('etag')!,
      idempotencyKey: `resume-${stream.endpointId}`,
    });
    expect(resumed.status, resumed.text).toBe(200);
    const probe = (await client.waitForDeliveries(11))[10]!;
    expect(JSON.parse(probe.body!)).toEqual({ after: true });
    const settled = await ack(stack, stream, [{ delivery_id: probe.delivery_id, attempt: probe.attempt, status: 200 }]);
    expect(settled.json.results![0]!.result).toBe('settled');
    await stack.eventsUntil('webhooks.endpoint.recovered', (d) => d['endpoint_id'] === stream.endpointId);
    const healthy = await stack.h.request('GET', `/endpoints/${stream.endpointId}`);
    expect(healthy.json.health).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });
    const [attempt] = (await stack.h.services.db.query(`SELECT trigger FROM attempts WHERE delivery_id = $1`, [
      probe.delivery_id,
    ])) as { trigger: string }[];
    expect(attempt!.trigger).toBe('probe');
    client.close();
  });
});
