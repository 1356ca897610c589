import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deliveryReconcileJob,
  DELIVERY_FROM,
  EngineSteps,
  MINUTE,
  SECOND,
  SHOWN_ATTEMPT_COUNT_SQL,
  shownStatusSql,
} from '@svc/core';
import { post } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * The engine's own queue (docs/delivery.md, "The engine"): the attempt-number fence, reconciliation of a lost
 * queue row, a claim that can never succeed, expiry that needs no claim, and what an open circuit costs.
 */
let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack();
});
afterAll(async () => {
  await stack.close();
});

async function deliveryOf(messageId: string) {
  const rows: { id: string; status: string; attempt_count: number; last_error: string | null }[] =
    await stack.h.services.db.query(
      `SELECT d.id, ${shownStatusSql('now()')} AS status, ${SHOWN_ATTEMPT_COUNT_SQL} AS attempt_count, d.last_error FROM ${DELIVERY_FROM} WHERE d.message_id = $1`,
      [messageId],
    );
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

function statusOf(messageId: string, status: string) {
  return stack.until(`delivery of ${messageId} ${status}`, async () => {
    const row = await deliveryOf(messageId);
    return row.status === status ? row : undefined;
  });
}

describe('the attempt-number fence', () => {
  it('a stale outcome after its lease ended changes nothing; the current attempt settles', async () => {
    await stack.stopWorker();
    try {
      const { tenantId } = await stack.setup('/fenced', { timeout_seconds: 5, retry_delays_seconds: [60, 60] });
      const messageId = await stack.publish(tenantId, { fenced: true });
      const { id } = await deliveryOf(messageId);
      const steps = new EngineSteps(stack.h.services);
      const [first] = await steps.claim([id]);
      expect(first?.attemptNumber).toBe(1);
      // Its lease (timeout 5 s + 5 s) ends with nothing settled: the row is due again and claimed as attempt 2.
      stack.h.clock.advance(11 * SECOND);
      const [second] = await steps.claim([id]);
      expect(second?.attemptNumber).toBe(2);

      const ok = { kind: 'response' as const, status: 200, retryAfterSeconds: null };
      const late = await steps.settle([{ attempt: first!, result: ok, durationMs: 5, responseBody: null, jitter: 0 }]);
      expect(late.outcomes[0]!.applied).toBe(false);
      expect(await deliveryOf(messageId)).toMatchObject({ status: 'in_flight', attempt_count: 2 });

      const failed = { kind: 'response' as const, status: 500, retryAfterSeconds: null };
      const current = await steps.settle([
        { attempt: second!, result: failed, durationMs: 5, responseBody: null, jitter: 0 },
      ]);
      expect(current.outcomes[0]).toMatchObject({ applied: true, decision: { status: 'retry_wait' } });
      expect(await deliveryOf(messageId)).toMatchObject({ status: 'retry_wait', attempt_count: 2 });
      // Both attempts happened and are on record; only the current one decided the delivery's state.
      const attempts: { number: number; status_code: number }[] = await stack.h.services.db.query(
        'SELECT number, status_code FROM attempts WHERE delivery_id = $1 ORDER BY number',
        [id],
      );
      expect(attempts).toEqual([
        { number: 1, status_code: 200 },
        { number: 2, status_code: 500 },
      ]);
    } finally {
      await stack.startWorker();
    }
  });
});

describe('reconciliation', () => {
  it('a pending delivery that lost its queue row gets it back from the sweep and is delivered', async () => {
    await stack.stopWorker();
    const { tenantId } = await stack.setup('/lost-row');
    const messageId = await stack.publish(tenantId, { lost: true });
    const { id } = await deliveryOf(messageId);
    await stack.h.services.db.query('DELETE FROM delivery_queue WHERE delivery_id = $1', [id]);
    await stack.startWorker();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await deliveryOf(messageId)).status).toBe('queued');
    await stack.h.services.db.transaction((tx) =>
      stack.h.services.jobs.send(tx, deliveryReconcileJob, [{ payload: {} }]),
    );
    stack.worker.notify();
    await statusOf(messageId, 'succeeded');
    expect(stack.received.filter((r) => r.path === '/lost-row')).toHaveLength(1);
  });

  it('a delivery whose signing secret is damaged fails at once with a clear last_error and an event', async () => {
    const { tenantId, endpointId } = await stack.setup('/unreadable');
    // Sealed with this process's key but damaged (its last byte flipped): it never opens, whatever the worker. (A
    // secret sealed with another key is the worker's fault and never fails a delivery: fault/sealing-key.test.ts.)
    await stack.h.services.db.query(
      `UPDATE endpoint_secrets
          SET secret_sealed = set_byte(secret_sealed, length(secret_sealed) - 1,
                                       get_byte(secret_sealed, length(secret_sealed) - 1) # 1)
        WHERE endpoint_id = $1`,
      [endpointId],
    );
    const messageId = await stack.publish(tenantId, { unreadable: true });
    const failed = await statusOf(messageId, 'failed');
    expect(failed).toMatchObject({ last_error: 'credentials_unreadable', attempt_count: 0 });
    expect(stack.received.filter((r) => r.path === '/unreadable')).toHaveLength(0);
    await stack.eventsUntil(
      'webhooks.delivery.failed',
      (data) => data['message_id'] === messageId && data['reason'] === 'credentials_unreadable',
    );
    const queue = await stack.h.services.db.query('SELECT 1 FROM delivery_queue WHERE delivery_id = $1', [failed.id]);
    expect(queue).toEqual([]);
  });

  it('expires a delivery on time although no claim reaches it (its endpoint paused)', async () => {
    const { tenantId, endpointId } = await stack.setup('/paused-expiry');
    const etag = (await stack.h.request('GET', `/endpoints/${endpointId}`)).headers.get('etag')!;
    const paused = await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
      ifMatch: etag,
      body: { status: 'paused' },
    });
    expect(paused.status, paused.text).toBe(200);
    const expiresAt = new Date(stack.h.clock.now().getTime() + 10 * MINUTE).toISOString();
    const published = await post(stack.h, '/messages', {
      tenant_id: tenantId,
      event_type: 'order.created',
      payload: {},
      expires_at: expiresAt,
    });
    expect(published.status, published.text).toBe(202);
    const messageId = published.json.id as string;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await deliveryOf(messageId)).status).toBe('queued');
    await stack.advance(10 * MINUTE);
    const expired = await statusOf(messageId, 'expired');
    expect(expired.last_error).toBe('window_over');
    await stack.eventsUntil('webhooks.delivery.expired', (data) => data['message_id'] === messageId);
  });
});

describe('a lost wake-up', () => {
  it('is covered by the discovery pass: a row made due without a notification goes within about 10 s', async () => {
    stack.script.set('/lost-wake', [500, 200]);
    const { tenantId } = await stack.setup('/lost-wake', { retry_delays_seconds: [3600] });
    const messageId = await stack.publish(tenantId, { lost: 'wake' });
    const waiting = await statusOf(messageId, 'retry_wait');
    // What retry_now does, without its NOTIFY (a listener that was reconnecting would miss it).
    await stack.h.services.db.query('UPDATE delivery_queue SET due_at = $2 WHERE delivery_id = $1', [
      waiting.id,
      stack.h.clock.now(),
    ]);
    const started = Date.now();
    await stack.until(
      'the retry',
      async () => ((await deliveryOf(messageId)).status === 'succeeded' ? true : undefined),
      15_000,
    );
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(stack.received.filter((r) => r.path === '/lost-wake')).toHaveLength(2);
  }, 20_000);
});

describe('an endpoint behind an open circuit', () => {
  it('costs no claim while it waits, and one claim and one settlement per probe', async () => {
    stack.script.set('/dead', [500]);
    const { tenantId, endpointId } = await stack.setup('/dead', { retry_delays_seconds: [] });
    for (let i = 0; i < 10; i += 1) await statusOf(await stack.publish(tenantId, { i }), 'failed');
    await stack.until('the circuit to open', async () => {
      const e = await stack.h.services.endpoints.getEndpoint({ actor: stack.h.team }, endpointId);
      return e.health.circuit === 'open' ? true : undefined;
    });
    const claims = () => countStatements(/WITH want AS/);
    // A wake-up for new work does not reopen the question of the circuit: publishing behind an open circuit costs
    // the engine no claim (each admission's wake-up used to clear the probe time and claim again).
    const whilePublishing = claims();
    const held: string[] = [];
    for (let i = 0; i < 50; i += 1) held.push(await stack.publish(tenantId, { held: i }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(whilePublishing.count).toBe(0);

    const quiet = claims();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(quiet.count).toBe(0);
    expect(stack.received.filter((r) => r.path === '/dead')).toHaveLength(10);

    // The probe time comes: one probe (it fails again), and the circuit waits twice as long.
    const probeCycle = claims();
    const settlements = countStatements(/DELETE FROM delivery_queue q USING x/);
    await stack.advance(61 * SECOND);
    await stack.until('the probe', () =>
      stack.received.filter((r) => r.path === '/dead').length === 11 ? 1 : undefined,
    );
    await stack.until('the probe to settle', async () => {
      const e = await stack.h.services.endpoints.getEndpoint({ actor: stack.h.team }, endpointId);
      return e.health.consecutiveFailures === 11 ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The claim that finds the probe time (a wake-up may add one that finds the circuit open) and one settlement.
    expect(probeCycle.count).toBeLessThanOrEqual(2);
    expect(settlements.count).toBe(1);
    const pending = await Promise.all(held.map(deliveryOf));
    expect(pending.filter((d) => d.status === 'queued').length).toBeGreaterThanOrEqual(48);
  });
});

/** Counts this process's statements whose text matches (the claim statement, for example) from now on. */
function countStatements(pattern: RegExp): { readonly count: number } {
  const counter = { count: 0 };
  statementWatchers.push({ pattern, counter });
  return counter;
}

const statementWatchers: { pattern: RegExp; counter: { count: number } }[] = [];
{
  const { default: pg } = await import('pg');
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function watchedQuery(this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    if (text) for (const watcher of statementWatchers) if (watcher.pattern.test(text)) watcher.counter.count += 1;
    return original.apply(this, args);
  };
}
