import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { REDACTION_VACUUM_AFTER_MS } from '@svc/core';
import { post } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * Inspect and repair with the real engine: dead letters, attempts, retry now, replay (frozen and current bytes,
 * billing, 402, 409, 410), cancel with an attempt in flight, redact with replays pending.
 */
let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 20 });
});
afterAll(async () => {
  await stack.close();
});

const SECOND = 1000;
const get = (path: string) => stack.h.request('GET', path);

interface Delivery {
  id: string;
  status: string;
  generation: number;
  attempt_count: number;
  endpoint_id: string;
  [field: string]: unknown;
}

async function deliveriesOf(messageId: string): Promise<Delivery[]> {
  const r = await get(`/deliveries?message_id=${messageId}`);
  expect(r.status, r.text).toBe(200);
  return r.json.data;
}

async function deliveryUntil(id: string, status: string): Promise<Delivery> {
  return stack.until(`delivery ${id} to be ${status}`, async () => {
    const d = await stack.h.services.deliveries.getDelivery({ actor: stack.h.team }, id);
    return d.status === status ? (d as unknown as Delivery) : undefined;
  });
}

async function chargedFor(resourceId: string): Promise<{ meter: string; units: string }[]> {
  return stack.h.services.db.query('SELECT meter, units::text FROM charges WHERE resource_id = $1', [resourceId]);
}

describe('dead letters and attempts', () => {
  it('lists a failed delivery as a dead letter with its attempt: status code, URL revision, duration, response body', async () => {
    const settings = await get('/settings');
    const patched = await stack.h.request('PATCH', '/settings', {
      body: { response_body_logging: true },
      ifMatch: settings.headers.get('etag')!,
    });
    expect(patched.status, patched.text).toBe(200);
    stack.script.set('/dead', [400]);
    const { tenantId, endpointId } = await stack.setup('/dead');
    const id = await stack.publish(tenantId, { order: 1 });
    const [delivery] = await deliveriesOf(id);
    await deliveryUntil(delivery!.id, 'failed');

    const dead = await get(`/deliveries?status=failed&endpoint_id=${endpointId}`);
    expect(dead.json.data).toHaveLength(1);
    expect(dead.json.data[0]).toMatchObject({
      id: delivery!.id,
      status: 'failed',
      attempt_count: 1,
      last_status_code: 400,
      last_error: 'http_400',
      next_attempt_at: null,
    });
    expect(dead.json.data[0].finished_at).not.toBeNull();
    const attempts = await get(`/deliveries/${delivery!.id}/attempts`);
    expect(attempts.json.data).toHaveLength(1);
    const [attempt] = attempts.json.data;
    expect(attempt).toMatchObject({
      delivery_id: delivery!.id,
      endpoint_id: endpointId,
      number: 1,
      trigger: 'scheduled',
      url_revision: 1,
      status_code: 400,
      error_kind: null,
      outcome: 'failed',
      response_body: 'ok',
      response_body_encoding: 'utf8',
    });
    expect(attempt.id).toMatch(/^wda_/);
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    // The receiver saw the same attempt ID.
    const seen = stack.received.filter((r) => r.path === '/dead');
    expect(seen[0]!.headers['svc-attempt-id']).toBe(attempt.id);
    const expired = await get(`/deliveries?status=expired&endpoint_id=${endpointId}`);
    expect(expired.json.data).toEqual([]);
  });
});

describe('POST /deliveries/{id}/replay', () => {
  it('replays a failed delivery as a new paid generation with the same webhook-id and bytes; the message status stays', async () => {
    stack.script.set('/replay', [400]);
    const { tenantId, secret } = await stack.setup('/replay');
    const id = await stack.publish(tenantId, { order: 'replay-me' });
    const [original] = await deliveriesOf(id);
    await deliveryUntil(original!.id, 'failed');
    expect((await stack.messageStatus(id)).status).toBe('failed');

    stack.script.set('/replay', [204]);
    const replay = await post(stack.h, `/deliveries/${original!.id}/replay`, {});
    expect(replay.status, replay.text).toBe(202);
    expect(replay.json).toMatchObject({
      message_id: id,
      generation: 1,
      kind: 'replay',
      replay_of: original!.id,
      status: 'queued',
      attempt_count: 0,
      price: { delivery_units: 1, total_usd: '0.00005' },
    });
    expect(replay.json.id).not.toBe(original!.id);
    expect(await chargedFor(replay.json.id)).toEqual([{ meter: 'webhooks.delivery_16k', units: '1' }]);
    await deliveryUntil(replay.json.id, 'succeeded');

    const requests = stack.received.filter((r) => r.path === '/replay');
    expect(requests).toHaveLength(2);
    const [first, second] = requests;
    expect(second!.headers['webhook-id']).toBe(id);
    expect(second!.headers['svc-delivery-id']).toBe(replay.json.id);
    expect(first!.headers['svc-delivery-id']).toBe(original!.id);
    expect(second!.body.equals(first!.body)).toBe(true);
    // Verified by the official Standard Webhooks library, as a receiver would.
    const verified = new Webhook(secret).verify(second!.body.toString('utf8'), {
      'webhook-id': String(second!.headers['webhook-id']),
      'webhook-timestamp': String(second!.headers['webhook-timestamp']),
      'webhook-signature': String(second!.headers['webhook-signature']),
    });
    expect(verified).toEqual({ order: 'replay-me' });
    // Replays have their own statuses and never change the message's.
    const message = await stack.messageStatus(id);
    expect(message.status).toBe('failed');
    expect(message.delivery_counts['succeeded']).toBe(0);
    const replays = await get(`/deliveries?message_id=${id}&kind=replay`);
    expect(replays.json.data.map((d: Delivery) => [d.id, d.status])).toEqual([[replay.json.id, 'succeeded']]);

    // A succeeded delivery can be replayed too, and the generations count up.
    const again = await post(stack.h, `/deliveries/${replay.json.id}/replay`, {});
    expect(again.json).toMatchObject({ generation: 2, replay_of: replay.json.id });
    await deliveryUntil(again.json.id, 'succeeded');
  });

  it('sends the frozen transformed bytes by default, or the current transform with configuration current', async () => {
    stack.script.set('/transformed', [400]);
    const { tenantId, endpointId } = await stack.setup('/transformed', {
      transform: { fields: [{ name: 'old', from: '/n' }] },
    });
    const id = await stack.publish(tenantId, { n: 5 });
    const [original] = await deliveriesOf(id);
    await deliveryUntil(original!.id, 'failed');
    const endpoint = await get(`/endpoints/${endpointId}`);
    const patched = await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
      body: { transform: { fields: [{ name: 'new', from: '/n' }] } },
      ifMatch: endpoint.headers.get('etag')!,
    });
    expect(patched.status, patched.text).toBe(200);
    stack.script.set('/transformed', [200]);

    const frozen = await post(stack.h, `/deliveries/${original!.id}/replay`, {});
    expect(frozen.status, frozen.text).toBe(202);
    await deliveryUntil(frozen.json.id, 'succeeded');
    const current = await post(stack.h, `/deliveries/${original!.id}/replay`, { configuration: 'current' });
    expect(current.status, current.text).toBe(202);
    expect(current.json.transformed).toBe(true);
    await deliveryUntil(current.json.id, 'succeeded');
    const bodies = stack.received.filter((r) => r.path === '/transformed').map((r) => r.body.toString('utf8'));
    expect(bodies).toEqual(['{"old":5}', '{"old":5}', '{"new":5}']);

    // A current transform that fails refuses the replay, stores and charges nothing.
    const again = await get(`/endpoints/${endpointId}`);
    await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
      body: { transform: { fields: [{ name: 'x', from: '/missing', required: true }] } },
      ifMatch: again.headers.get('etag')!,
    });
    const failed = await post(stack.h, `/deliveries/${original!.id}/replay`, { configuration: 'current' });
    expect(failed.status).toBe(422);
    expect(failed.json.error).toMatchObject({ code: 'transform_failed', resource_id: endpointId });
    expect(await deliveriesOf(id)).toHaveLength(3);
  });

  it('answers 410 after redaction, 409 for a deleted or disabled endpoint or a canceled delivery, 402 when unpaid', async () => {
    stack.script.set('/refuse', [400]);
    const { tenantId, endpointId } = await stack.setup('/refuse');
    const redacted = await stack.publish(tenantId, { n: 1 });
    const kept = await stack.publish(tenantId, { n: 2 });
    const [r1] = await deliveriesOf(redacted);
    const [r2] = await deliveriesOf(kept);
    await deliveryUntil(r1!.id, 'failed');
    await deliveryUntil(r2!.id, 'failed');
    await post(stack.h, `/messages/${redacted}/redact`, {});
    const gone = await post(stack.h, `/deliveries/${r1!.id}/replay`, {});
    expect(gone.status).toBe(410);
    expect(gone.json.error.code).toBe('payload_expired');

    // 402: a key whose monthly limit is spent cannot pay the replay; nothing is stored.
    const capped = await stack.h.services.teams.createKey(stack.h.team.teamId, { spendingLimitMicros: 1n });
    const unpaid = await post(stack.h, `/deliveries/${r2!.id}/replay`, {}, { key: capped.secret });
    expect(unpaid.status).toBe(402);
    expect(unpaid.json.error.code).toBe('spending_limit');
    expect(await deliveriesOf(kept)).toHaveLength(1);

    const endpoint = await get(`/endpoints/${endpointId}`);
    await stack.h.request('DELETE', `/endpoints/${endpointId}`, { ifMatch: endpoint.headers.get('etag')! });
    const deleted = await post(stack.h, `/deliveries/${r2!.id}/replay`, {});
    expect(deleted.status).toBe(409);
    expect(deleted.json.error.code).toBe('invalid_state');
  });
});

describe('POST /deliveries/{id}/retry_now', () => {
  it('makes a delivery in retry_wait due now, with its existing attempts and no charge', async () => {
    stack.script.set('/later', [503, 200]);
    const { tenantId } = await stack.setup('/later', { retry_delays_seconds: [3600] });
    const id = await stack.publish(tenantId, { n: 1 });
    const [delivery] = await deliveriesOf(id);
    const waiting = await deliveryUntil(delivery!.id, 'retry_wait');
    expect(new Date(waiting['next_attempt_at'] as string).getTime()).toBeGreaterThan(
      stack.h.clock.now().getTime() + 3500 * SECOND,
    );
    const chargesBefore = await stack.h.services.db.query('SELECT count(*)::int AS n FROM charges WHERE team_id = $1', [
      stack.h.team.teamId,
    ]);
    const retried = await post(stack.h, `/deliveries/${delivery!.id}/retry_now`, {});
    expect(retried.status, retried.text).toBe(202);
    expect(retried.json).toMatchObject({ id: delivery!.id, status: 'retry_wait', attempt_count: 1 });
    expect(retried.json.next_attempt_at).toBe(stack.h.clock.now().toISOString());
    const done = await deliveryUntil(delivery!.id, 'succeeded');
    expect(done.attempt_count).toBe(2);
    const attempts = await get(`/deliveries/${delivery!.id}/attempts`);
    expect(attempts.json.data.map((a: { number: number; trigger: string }) => [a.number, a.trigger])).toEqual([
      [1, 'scheduled'],
      [2, 'retry_now'],
    ]);
    const chargesAfter = await stack.h.services.db.query('SELECT count(*)::int AS n FROM charges WHERE team_id = $1', [
      stack.h.team.teamId,
    ]);
    expect(chargesAfter[0].n).toBe(chargesBefore[0].n);
    const finished = await post(stack.h, `/deliveries/${delivery!.id}/retry_now`, {});
    expect(finished.status).toBe(409);
    expect(finished.json.error.code).toBe('invalid_state');
  });

  it('sends a delivery held behind an open circuit now, as the probe', async () => {
    stack.script.set('/tripped', [500]);
    const { tenantId, endpointId } = await stack.setup('/tripped', { retry_delays_seconds: [] });
    for (let i = 0; i < 10; i += 1) {
      const m = await stack.publish(tenantId, { i });
      const [d] = await deliveriesOf(m);
      await deliveryUntil(d!.id, 'failed');
    }
    const health = await stack.until('the circuit to open', async () => {
      const e = await stack.h.services.endpoints.getEndpoint({ actor: stack.h.team }, endpointId);
      return e.health.circuit === 'open' ? e.health : undefined;
    });
    expect(health.circuit).toBe('open');
    const held = await stack.publish(tenantId, { held: true });
    const [heldDelivery] = await deliveriesOf(held);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await stack.h.services.deliveries.getDelivery({ actor: stack.h.team }, heldDelivery!.id)).status).toBe(
      'queued',
    );
    stack.script.set('/tripped', [200]);
    const retried = await post(stack.h, `/deliveries/${heldDelivery!.id}/retry_now`, {});
    expect(retried.status, retried.text).toBe(202);
    await deliveryUntil(heldDelivery!.id, 'succeeded');
    const attempts = await get(`/deliveries/${heldDelivery!.id}/attempts`);
    expect(attempts.json.data.map((a: { trigger: string }) => a.trigger)).toEqual(['probe']);
    const closed = await stack.h.services.endpoints.getEndpoint({ actor: stack.h.team }, endpointId);
    expect(closed.health.circuit).toBe('closed');
  });
});

describe('cancel and redact with the engine running', () => {
  it('cancel lets an in-flight attempt finish but cancels its retries, and leaves replays alone', async () => {
    stack.script.set('/slow', [500]);
    stack.delays.set('/slow', 800);
    const { tenantId } = await stack.setup('/slow', { retry_delays_seconds: [1] });
    const id = await stack.publish(tenantId, { n: 1 });
    const [delivery] = await deliveriesOf(id);
    await deliveryUntil(delivery!.id, 'in_flight');
    const canceled = await post(stack.h, `/messages/${id}/cancel`, {});
    expect(canceled.json).toEqual({ message_id: id, canceled_count: 0, in_flight_count: 1, already_terminal_count: 0 });
    const after = await deliveryUntil(delivery!.id, 'canceled');
    expect(after.attempt_count).toBe(1);
    await stack.advance(5 * SECOND);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stack.received.filter((r) => r.path === '/slow')).toHaveLength(1);
    expect((await stack.messageStatus(id)).status).toBe('canceled');

    // A replay of the canceled message's finished delivery is not a canceled delivery: only originals cancel.
    stack.delays.set('/slow', 0);
    stack.script.set('/slow', [400]);
    const other = await stack.publish(tenantId, { n: 2 });
    const [od] = await deliveriesOf(other);
    await deliveryUntil(od!.id, 'failed');
    const endpointId = od!.endpoint_id;
    const endpoint = await get(`/endpoints/${endpointId}`);
    await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
      body: { status: 'paused' },
      ifMatch: endpoint.headers.get('etag')!,
    });
    const replay = await post(stack.h, `/deliveries/${od!.id}/replay`, {});
    expect(replay.status, replay.text).toBe(202);
    const cancelOther = await post(stack.h, `/messages/${other}/cancel`, {});
    expect(cancelOther.json).toEqual({
      message_id: other,
      canceled_count: 0,
      in_flight_count: 0,
      already_terminal_count: 1,
    });
    expect((await stack.h.services.deliveries.getDelivery({ actor: stack.h.team }, replay.json.id)).status).toBe(
      'queued',
    );

    // Redaction cancels every pending delivery, replays included.
    const redacted = await post(stack.h, `/messages/${other}/redact`, {});
    expect(redacted.status).toBe(202);
    const replayAfter = await stack.h.services.deliveries.getDelivery({ actor: stack.h.team }, replay.json.id);
    expect(replayAfter).toMatchObject({ status: 'canceled', last_error: 'message_redacted' });
  });

  it('the scheduled maintenance job completes a redaction (redacting, then complete)', async () => {
    const { tenantId } = await stack.setup('/redact-job');
    const id = await stack.publish(tenantId, { secret: 1 });
    const [delivery] = await deliveriesOf(id);
    await deliveryUntil(delivery!.id, 'succeeded');
    const r = await post(stack.h, `/messages/${id}/redact`, {});
    expect(r.json.status).toBe('redacting');
    // The sweep completes a redaction only once no transaction that could see the erased bytes is running, in the
    // whole cluster (other test files' databases included), and a VACUUM has run since: autovacuum's, or its own an
    // hour later. Like its 5-minute schedule, the test runs it again, moving the clock on an hour each time.
    let lastRun = 0;
    const done = await stack.until('the redaction to complete', async () => {
      const m = await get(`/messages/${id}`);
      if (m.json.redaction_status === 'complete') return m.json;
      if (Date.now() - lastRun > 1000) {
        lastRun = Date.now();
        await stack.advance(REDACTION_VACUUM_AFTER_MS);
        await stack.runMaintenance();
      }
      return undefined;
    });
    expect(done).toMatchObject({ redacted: true, content_available: false });
  });
});
