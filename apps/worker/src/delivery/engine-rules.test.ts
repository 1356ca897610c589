import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 20 }, { consoleUrl: CONSOLE });
});
afterAll(async () => {
  await stack.close();
});

const SECOND = 1000;
const CONSOLE = 'https://console.svc.test';
const terminal = new Set(['succeeded', 'failed', 'partially_failed', 'canceled', 'no_destinations']);

async function settled(id: string): Promise<{ status: string; delivery_counts: Record<string, number> }> {
  return stack.until(`message ${id} to finish`, async () => {
    const m = await stack.messageStatus(id);
    return terminal.has(m.status) || m.delivery_counts['expired'] ? m : undefined;
  });
}

async function health(endpointId: string) {
  return (await stack.h.services.endpoints.getEndpoint({ actor: stack.h.team }, endpointId)).health;
}

/** svc_delivery_attempts_total of one outcome label in this process. */
async function attemptsCounted(outcome: string): Promise<number> {
  const metric = await stack.h.services.metrics.attempts.get();
  return metric.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

describe('engine rules', () => {
  it('counts a success that arrives after its delivery was settled elsewhere as already_settled, not succeeded', async () => {
    stack.delays.set('/late', 1500);
    const { tenantId } = await stack.setup('/late');
    const id = await stack.publish(tenantId, { late: true });
    const [delivery] = (await stack.h.services.deliveries.listDeliveries({ actor: stack.h.team }, { message_id: id }))
      .data;
    await stack.until('the attempt to be in flight', async () => {
      const rows = await stack.h.services.db.query(
        'SELECT 1 FROM delivery_queue WHERE delivery_id = $1 AND lease_owner IS NOT NULL',
        [delivery!.id],
      );
      return rows.length > 0 ? true : undefined;
    });
    const before = { succeeded: await attemptsCounted('succeeded'), late: await attemptsCounted('already_settled') };
    // Meanwhile its lease lapsed and another worker's attempt settled it as failed.
    await stack.h.services.db.query('DELETE FROM delivery_queue WHERE delivery_id = $1', [delivery!.id]);
    await stack.h.services.db.query(`UPDATE deliveries SET status = 'failed', finished_at = now() WHERE id = $1`, [
      delivery!.id,
    ]);
    await stack.until('the late success to settle', async () =>
      (await attemptsCounted('already_settled')) > before.late ? true : undefined,
    );
    expect(await attemptsCounted('already_settled')).toBe(before.late + 1);
    expect(await attemptsCounted('succeeded')).toBe(before.succeeded);
    expect(await attemptsCounted('failed')).toBe(0);
    const after = await stack.h.services.deliveries.getDelivery({ actor: stack.h.team }, delivery!.id);
    expect(after.status).toBe('failed');
  });

  it('ten consecutive failures open the circuit; after a minute one probe goes; a success closes it (recovered)', async () => {
    stack.script.set('/circuit', [500]);
    const { tenantId, endpointId } = await stack.setup('/circuit', { retry_delays_seconds: [] });
    for (let i = 0; i < 10; i += 1) await settled(await stack.publish(tenantId, { i }));
    const opened = await health(endpointId);
    expect(opened.circuit).toBe('open');
    // The circuit opening is announced once, with what failed and when the probe goes.
    expect(await stack.eventsUntil('webhooks.endpoint.failing', () => true, endpointId)).toEqual([
      {
        endpoint_id: endpointId,
        failures: 10,
        last_error: 'http_500',
        last_status_code: 500,
        next_probe_at: opened.nextProbeAt!.toISOString(),
        console_url: `${CONSOLE}/endpoints/${endpointId}`,
      },
    ]);
    const held = await stack.publish(tenantId, { held: true });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stack.received.filter((r) => r.path === '/circuit')).toHaveLength(10);
    expect((await stack.messageStatus(held)).status).toBe('queued');

    // The first probe fails: the wait doubles.
    await stack.advance(61 * SECOND);
    await stack.until('the first probe', () =>
      stack.received.filter((r) => r.path === '/circuit').length === 11 ? true : undefined,
    );
    const afterProbe = await stack.until('the circuit to reopen', async () => {
      const h = await health(endpointId);
      return h.circuit === 'open' && h.consecutiveFailures === 11 ? h : undefined;
    });
    const wait = afterProbe.nextProbeAt!.getTime() - stack.h.clock.now().getTime();
    expect(wait).toBeGreaterThan(110 * SECOND);
    expect(wait).toBeLessThanOrEqual(120 * SECOND);

    stack.script.set('/circuit', [200]);
    await stack.advance(121 * SECOND);
    const another = await stack.publish(tenantId, { after: true });
    await settled(another);
    const closed = await health(endpointId);
    expect(closed).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
    // What it recovered from comes from the health row: the success's batch had no failure of its own.
    expect(await stack.eventsUntil('webhooks.endpoint.recovered', () => true, endpointId)).toEqual([
      {
        endpoint_id: endpointId,
        failures_before: 11,
        last_error: 'http_500',
        console_url: `${CONSOLE}/endpoints/${endpointId}`,
      },
    ]);
    // A failed probe reopens the circuit without a second announcement.
    expect(await stack.eventsUntil('webhooks.endpoint.failing', () => true, endpointId)).toHaveLength(1);
    const probes = await stack.h.services.db.query(
      `SELECT a.trigger FROM attempts a WHERE a.endpoint_id = $1 AND a.trigger = 'probe'`,
      [endpointId],
    );
    expect(probes.length).toBe(2);
  });

  it('failures settled concurrently are all counted: ten at once open the circuit at exactly ten', async () => {
    stack.script.set('/burst', [500]);
    const { tenantId, endpointId } = await stack.setup('/burst', { retry_delays_seconds: [], max_concurrency: 3 });
    // Published one after another (a team stores at most 4 messages at once), delivered three at a time.
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) ids.push(await stack.publish(tenantId, { i }));
    for (const id of ids) await settled(id);
    expect(await health(endpointId)).toMatchObject({ circuit: 'open', consecutiveFailures: 10 });
    const [failing] = await stack.eventsUntil('webhooks.endpoint.failing', () => true, endpointId);
    expect(failing).toMatchObject({ failures: 10, last_error: 'http_500' });
  });

  it('a paused endpoint keeps its deliveries queued while their deadline runs; then they expire', async () => {
    const { tenantId, endpointId } = await stack.setup('/paused', { status: 'paused' });
    const now = stack.h.clock.now().getTime();
    const r = await stack.h.request('POST', '/messages', {
      idempotencyKey: `paused-${now}`,
      body: {
        tenant_id: tenantId,
        event_type: 'order.created',
        payload: {},
        expires_at: new Date(now + 90 * SECOND).toISOString(),
      },
    });
    expect(r.status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await stack.messageStatus(r.json.id)).status).toBe('queued');
    expect((await stack.h.request('GET', `/endpoints/${endpointId}`)).json.queued_count).toBe(1);
    await stack.advance(31 * SECOND);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await stack.messageStatus(r.json.id)).status).toBe('queued');
    await stack.advance(60 * SECOND);
    const done = await settled(r.json.id);
    expect(done.status).toBe('failed');
    expect(done.delivery_counts['expired']).toBe(1);
    expect(stack.received.filter((x) => x.path === '/paused')).toHaveLength(0);
    expect((await stack.h.request('GET', `/endpoints/${endpointId}`)).json.queued_count).toBe(0);
    await stack.eventsUntil('webhooks.delivery.expired', (data) => data['message_id'] === r.json.id);
  });

  it('never runs more requests to an endpoint at once than its max_concurrency', async () => {
    stack.delays.set('/narrow', 150);
    const { tenantId } = await stack.setup('/narrow', { max_concurrency: 1 });
    const ids = [];
    for (let i = 0; i < 6; i += 1) ids.push(await stack.publish(tenantId, { i }));
    for (const id of ids) expect((await settled(id)).status).toBe('succeeded');
    expect(stack.peakConcurrency.get('/narrow')).toBe(1);
  });

  it('a longer Retry-After on 429 wins over the endpoint delay', async () => {
    stack.script.set('/slow-down', [429, 200]);
    const { tenantId } = await stack.setup('/slow-down', { retry_delays_seconds: [1] });
    const id = await stack.publish(tenantId);
    const retry = await stack.until('retry_wait', async () => {
      const rows = await stack.h.services.db.query(
        `SELECT next_attempt_at FROM deliveries WHERE message_id = $1 AND status = 'retry_wait'`,
        [id],
      );
      return rows[0] as { next_attempt_at: Date } | undefined;
    });
    const wait = retry.next_attempt_at.getTime() - stack.h.clock.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(120 * SECOND);
    await stack.advance(60 * SECOND);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(stack.received.filter((r) => r.path === '/slow-down')).toHaveLength(1);
    await stack.advance(61 * SECOND);
    expect((await settled(id)).status).toBe('succeeded');
  });

  it('gives up after the endpoint delays run out: the attempts follow its schedule, then failed', async () => {
    stack.script.set('/down', [503]);
    const { tenantId } = await stack.setup('/down', { retry_delays_seconds: [2, 4] });
    const id = await stack.publish(tenantId);
    for (const [index, delay] of [2, 4].entries()) {
      await stack.until(`attempt ${index + 1}`, () =>
        stack.received.filter((r) => r.path === '/down').length === index + 1 ? true : undefined,
      );
      await stack.until('retry_wait', async () =>
        (await stack.messageStatus(id)).delivery_counts['retry_wait'] === 1 ? true : undefined,
      );
      await stack.advance((delay * 1.2 + 0.1) * SECOND);
    }
    const done = await settled(id);
    expect(done.status).toBe('failed');
    const attempts = await stack.h.services.db.query(
      `SELECT a.number, a.trigger FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
        WHERE d.message_id = $1 ORDER BY a.number`,
      [id],
    );
    expect(attempts).toEqual([
      { number: 1, trigger: 'scheduled' },
      { number: 2, trigger: 'retry' },
      { number: 3, trigger: 'retry' },
    ]);
  });

  it('keeps up to 4 KiB of the response body only while the team logs response bodies', async () => {
    const { tenantId, endpointId } = await stack.setup('/logged');
    const quiet = await stack.publish(tenantId, { n: 1 });
    await settled(quiet);
    const settings = await stack.h.request('GET', '/settings');
    const patched = await stack.h.request('PATCH', '/settings', {
      ifMatch: settings.headers.get('etag')!,
      body: { response_body_logging: true },
    });
    expect(patched.status).toBe(200);
    const logged = await stack.publish(tenantId, { n: 2 });
    await settled(logged);
    const rows: { message_id: string; response_body: Buffer | null; duration_ms: number; url_revision: string }[] =
      await stack.h.services.db.query(
        `SELECT d.message_id, a.response_body, a.duration_ms, a.url_revision FROM attempts a
           JOIN deliveries d ON d.id = a.delivery_id WHERE a.endpoint_id = $1`,
        [endpointId],
      );
    const byMessage = new Map(rows.map((r) => [r.message_id, r]));
    expect(byMessage.get(quiet)!.response_body).toBeNull();
    expect(byMessage.get(logged)!.response_body!.toString()).toBe('ok');
    expect(byMessage.get(logged)!.url_revision).toBe('1');
    expect(byMessage.get(logged)!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('a destination that now resolves to a private address fails without retry and disables the endpoint', async () => {
    const { tenantId, endpointId } = await stack.setup('/moved');
    // As if the host's DNS now pointed into a private network (the URL was public when it was accepted).
    await stack.h.services.db.query(`UPDATE endpoints SET url = 'http://10.20.30.40/hook' WHERE id = $1`, [endpointId]);
    const id = await stack.publish(tenantId);
    expect((await settled(id)).status).toBe('failed');
    const endpoint = await stack.h.services.endpoints.getEndpoint({ actor: stack.h.team }, endpointId);
    expect(endpoint).toMatchObject({ status: 'disabled', disabledReason: 'unsafe_destination' });
    const events = await stack.eventsUntil('webhooks.endpoint.disabled', () => true, endpointId);
    expect(events).toEqual([{ endpoint_id: endpointId, reason: 'unsafe_destination' }]);
  });
});
