import { Webhook } from 'standardwebhooks';
import { countRoundTrips } from '@svc/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../../../server/src/graphql/test-client.js';
import { post } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack, type Received } from './delivery.testing.js';

/** Ordered endpoints (docs/delivery.md, "Ordered endpoints"), with a real worker and a real loopback receiver. */
let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 20 });
});
afterAll(async () => {
  await stack.close();
});

const terminal = new Set(['succeeded', 'failed', 'partially_failed', 'canceled']);

function on(path: string): Received[] {
  return stack.received.filter((r) => r.path === path);
}

function sequences(path: string): number[] {
  return on(path).map((r) => Number(r.headers['svc-sequence']));
}

async function settled(id: string) {
  return stack.until(`message ${id} to finish`, async () => {
    const m = await stack.messageStatus(id);
    return terminal.has(m.status) ? m : undefined;
  });
}

async function endpoint(id: string) {
  const r = await stack.h.request('GET', `/endpoints/${id}`);
  expect(r.status).toBe(200);
  return r;
}

async function change(id: string, body: Record<string, unknown>) {
  const current = await endpoint(id);
  return stack.h.request('PATCH', `/endpoints/${id}`, { body, ifMatch: current.headers.get('etag')! });
}

describe('ordered endpoints', () => {
  it('deliver one at a time in admission order, numbered 1, 2, 3... in Svc-Sequence, signed as usual', async () => {
    stack.delays.set('/ordered', 15);
    const { tenantId, endpointId, secret } = await stack.setup('/ordered', { ordering: 'ordered' });
    const shown = await endpoint(endpointId);
    expect(shown.json).toMatchObject({ ordering: 'ordered', ordering_on_failure: 'continue', max_concurrency: 1 });
    // Publishers race each other: the numbers follow the order the admissions committed, with no gap.
    const ids = (
      await Promise.all(
        Array.from({ length: 4 }, async (_, p) => {
          const mine: string[] = [];
          for (let i = 0; i < 6; i += 1) mine.push(await stack.publish(tenantId, { p, i }));
          return mine;
        }),
      )
    ).flat();
    for (const id of ids) await settled(id);
    expect(sequences('/ordered')).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    expect(stack.peakConcurrency.get('/ordered')).toBe(1);
    // Each publisher's own messages (admitted one after another) arrive in the order it sent them.
    const payloads = on('/ordered').map((r) => JSON.parse(r.body.toString()) as { p: number; i: number });
    for (let p = 0; p < 4; p += 1)
      expect(payloads.filter((x) => x.p === p).map((x) => x.i)).toEqual([0, 1, 2, 3, 4, 5]);
    // The number is the delivery's, stored with it, and not part of what is signed.
    const wh = new Webhook(secret.slice('whsec_'.length));
    const first = on('/ordered')[0]!;
    expect(() =>
      wh.verify(first.body.toString(), {
        'webhook-id': String(first.headers['webhook-id']),
        'webhook-timestamp': String(first.headers['webhook-timestamp']),
        'webhook-signature': String(first.headers['webhook-signature']),
      }),
    ).not.toThrow();
    const [row] = await stack.h.services.db.query('SELECT sequence FROM deliveries WHERE id = $1', [
      first.headers['svc-delivery-id'],
    ]);
    expect(String(row.sequence)).toBe('1');
  });

  it('number a scheduled delivery when it comes due: it never holds back what was due before it', async () => {
    const { tenantId } = await stack.setup('/scheduled', { ordering: 'ordered' });
    const later = new Date(stack.h.clock.now().getTime() + 3_600_000).toISOString();
    const scheduled = await post(stack.h, '/messages', {
      tenant_id: tenantId,
      event_type: 'order.created',
      payload: { n: 'scheduled' },
      deliver_at: later,
    });
    expect(scheduled.status, scheduled.text).toBe(202);
    const now = [await stack.publish(tenantId, { n: 1 }), await stack.publish(tenantId, { n: 2 })];
    for (const id of now) await settled(id);
    // Before, the scheduled one took number 1 at admission and held both back for the hour.
    expect(sequences('/scheduled')).toEqual([1, 2]);
    await stack.advance(3_601_000);
    await settled(scheduled.json.id);
    expect(sequences('/scheduled')).toEqual([1, 2, 3]);
    expect(JSON.parse(on('/scheduled')[2]!.body.toString())).toEqual({ n: 'scheduled' });
  });

  it('hold only for the head: a delivery behind it that expires leaves a gap, and the endpoint goes on', async () => {
    stack.script.set('/gap', [503, 200, 200]);
    const { tenantId, endpointId } = await stack.setup('/gap', {
      ordering: 'ordered',
      ordering_on_failure: 'hold',
      retry_delays_seconds: [60],
    });
    const head = await stack.publish(tenantId, { n: 1 });
    await stack.until('the head to fail once', () => (on('/gap').length === 1 ? true : undefined));
    const soon = new Date(stack.h.clock.now().getTime() + 30_000).toISOString();
    const behind = await post(stack.h, '/messages', {
      tenant_id: tenantId,
      event_type: 'order.created',
      payload: { n: 2 },
      expires_at: soon,
    });
    expect(behind.status, behind.text).toBe(202);
    const last = await stack.publish(tenantId, { n: 3 });
    // The one behind the head expires while the head waits for its retry: the sweep expires it, and holds nothing.
    await stack.advance(31_000);
    await stack.until('the delivery behind the head to expire', async () =>
      (await stack.messageStatus(behind.json.id)).status === 'failed' ? true : undefined,
    );
    expect((await endpoint(endpointId)).json.status).toBe('enabled');
    await stack.advance(60_000);
    expect((await settled(head)).status).toBe('succeeded');
    expect((await settled(last)).status).toBe('succeeded');
    // The receiver sees the gap in the numbers (2 expired unsent).
    expect(sequences('/gap')).toEqual([1, 1, 3]);
  });

  it('settle the head and claim the next in one round trip: a backlog costs about one engine statement per delivery', async () => {
    const { tenantId, endpointId } = await stack.setup('/ordered-trips', { ordering: 'ordered' });
    expect((await change(endpointId, { status: 'paused' })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 40; i += 1) ids.push(await stack.publish(tenantId, { i }));
    // Only the engine's claims and settlements count: alone, in a batch, or the two in one transaction (BEGIN;
    // EXECUTE ...). Preparing a statement on a new connection is not a round trip of a delivery.
    const engine = countRoundTrips({ ignoring: /^(?!\s*(?:WITH owned AS|WITH x AS \(|BEGIN;\s*EXECUTE rt_engine_))/ });
    try {
      expect((await change(endpointId, { status: 'enabled' })).status).toBe(200);
      for (const id of ids) await settled(id);
      expect(sequences('/ordered-trips')).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      // A claim then a settlement per delivery would be 80; one of each to start and one combined per delivery
      // after it, about 41. A few more are allowed for claims the tick makes on its own (a wake-up, the sweep).
      expect(engine.count).toBeLessThanOrEqual(50);
    } finally {
      engine.close();
    }
  });

  it('settle a delivered head on its own when the claim made with it fails: nothing is sent twice, the order holds', async () => {
    const db = stack.h.services.db;
    const { tenantId, endpointId } = await stack.setup('/ordered-claim-fails', { ordering: 'ordered' });
    expect((await change(endpointId, { status: 'paused' })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) ids.push(await stack.publish(tenantId, { i }));
    // The third claim from now fails (a claim writes this worker's slot row; a sequence is not rolled back with the
    // failed transaction): the first is the tick's, the next ones are made with each head's settlement.
    await db.query(`CREATE SEQUENCE claim_failure_seq`);
    await db.query(`CREATE FUNCTION claim_failure() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('claim_failure_seq') = 3 THEN RAISE EXCEPTION 'a claim that fails (test)'; END IF;
        RETURN NEW;
      END $$`);
    await db.query(`CREATE TRIGGER claim_failure BEFORE UPDATE ON dispatch_slots FOR EACH ROW
                      EXECUTE FUNCTION claim_failure()`);
    try {
      expect((await change(endpointId, { status: 'enabled' })).status).toBe(200);
      for (const id of ids) await settled(id);
      const [{ last_value: claims }] = await db.query(`SELECT last_value FROM claim_failure_seq`);
      expect(Number(claims)).toBeGreaterThan(3);
      // Each number once, in order, one attempt each: the head delivered before the failure was settled, not left
      // to its lease's end (15 s here) and sent again.
      expect(sequences('/ordered-claim-fails')).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const [{ n }] = await db.query(
        `SELECT count(*)::int AS n FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1`,
        [endpointId],
      );
      expect(n).toBe(20);
    } finally {
      await db.query(`DROP TRIGGER claim_failure ON dispatch_slots`);
      await db.query(`DROP FUNCTION claim_failure()`);
      await db.query(`DROP SEQUENCE claim_failure_seq`);
    }
  });

  it('keep the order across retries: nothing behind a delivery goes while it waits for its retry', async () => {
    stack.script.set('/retried', [503, 503, 200]);
    const { tenantId } = await stack.setup('/retried', { ordering: 'ordered', retry_delays_seconds: [1, 1] });
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push(await stack.publish(tenantId, { i }));
    await stack.until('the first attempt', () => (on('/retried').length === 1 ? true : undefined));
    // The head waits for its retry (the service clock stands still): the others wait behind it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sequences('/retried')).toEqual([1]);
    await stack.advance(2000);
    await stack.until('the second attempt', () => (on('/retried').length === 2 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sequences('/retried')).toEqual([1, 1]);
    await stack.advance(2000);
    for (const id of ids) await settled(id);
    expect(sequences('/retried')).toEqual([1, 1, 1, 2, 3]);
  });

  it('continue past a delivery that failed for good (a dead letter), or hold: the endpoint pauses until enabled', async () => {
    stack.script.set('/continue', [400, 200]);
    const going = await stack.setup('/continue', { ordering: 'ordered', retry_delays_seconds: [] });
    const a = [await stack.publish(going.tenantId, { n: 1 }), await stack.publish(going.tenantId, { n: 2 })];
    expect((await settled(a[0]!)).status).toBe('failed');
    expect((await settled(a[1]!)).status).toBe('succeeded');
    expect(sequences('/continue')).toEqual([1, 2]);

    stack.script.set('/hold', [400, 200]);
    const holding = await stack.setup('/hold', {
      ordering: 'ordered',
      ordering_on_failure: 'hold',
      retry_delays_seconds: [],
    });
    const b = [await stack.publish(holding.tenantId, { n: 1 }), await stack.publish(holding.tenantId, { n: 2 })];
    expect((await settled(b[0]!)).status).toBe('failed');
    const [held] = await stack.eventsUntil('webhooks.endpoint.held', () => true, holding.endpointId);
    expect(held).toEqual({
      endpoint_id: holding.endpointId,
      delivery_id: on('/hold')[0]!.headers['svc-delivery-id'],
      message_id: b[0],
      delivery_status: 'failed',
      reason: 'http_400',
    });
    expect((await endpoint(holding.endpointId)).json.status).toBe('paused');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sequences('/hold')).toEqual([1]);
    expect((await stack.messageStatus(b[1]!)).status).toBe('queued');
    // Someone fixed the receiver and enables the endpoint: the order goes on.
    expect((await change(holding.endpointId, { status: 'enabled' })).status).toBe(200);
    expect((await settled(b[1]!)).status).toBe('succeeded');
    expect(sequences('/hold')).toEqual([1, 2]);
  });

  it('a replay of a dead letter takes the next number and goes behind what already waits', async () => {
    stack.script.set('/replayed', [400, 200]);
    const { tenantId } = await stack.setup('/replayed', { ordering: 'ordered', retry_delays_seconds: [] });
    const first = await stack.publish(tenantId, { n: 1 });
    expect((await settled(first)).status).toBe('failed');
    const [dead] = (await stack.h.services.deliveries.listDeliveries({ actor: stack.h.team }, { message_id: first }))
      .data;
    const replay = await post(stack.h, `/deliveries/${dead!.id}/replay`, {});
    expect(replay.status, replay.text).toBe(202);
    await stack.until('the replay', () => (on('/replayed').length === 2 ? true : undefined));
    expect(sequences('/replayed')).toEqual([1, 2]);
    expect(on('/replayed')[1]!.headers['webhook-id']).toBe(first);
  });

  it('switching on numbers the deliveries waiting at that moment; switching off stops numbering', async () => {
    const { tenantId, endpointId } = await stack.setup('/switch', { status: 'paused', max_concurrency: 3 });
    const waiting = [];
    for (let i = 0; i < 3; i += 1) waiting.push(await stack.publish(tenantId, { i }));
    const on1 = await change(endpointId, { ordering: 'ordered', status: 'enabled' });
    expect(on1.status, on1.text).toBe(200);
    expect(on1.json).toMatchObject({ ordering: 'ordered', max_concurrency: 1 });
    for (const id of waiting) await settled(id);
    expect(sequences('/switch')).toEqual([1, 2, 3]);
    expect(on('/switch').map((r) => (JSON.parse(r.body.toString()) as { i: number }).i)).toEqual([0, 1, 2]);

    const off = await change(endpointId, { ordering: 'none', max_concurrency: 2 });
    expect(off.status, off.text).toBe(200);
    // Back to the defaults, the answer is exactly what an endpoint that never ordered shows.
    expect('ordering' in off.json).toBe(false);
    await settled(await stack.publish(tenantId, { i: 3 }));
    expect(on('/switch')[3]!.headers['svc-sequence']).toBeUndefined();
    // On again: numbers go on from where they were, never back to 1.
    await change(endpointId, { ordering: 'ordered' });
    await settled(await stack.publish(tenantId, { i: 4 }));
    expect(on('/switch')[4]!.headers['svc-sequence']).toBe('4');
  });

  it('a delivery admitted while ordering was switched on gets its number from the sweep, then goes', async () => {
    const { tenantId, endpointId } = await stack.setup('/stray', { ordering: 'ordered', status: 'paused' });
    // As if its admission had read the endpoint before the switch committed: no number.
    const unnumber = async () => {
      await stack.h.services.db.query('UPDATE delivery_queue SET sequence = NULL WHERE endpoint_id = $1', [endpointId]);
      await stack.h.services.db.query(
        `UPDATE deliveries SET sequence = NULL WHERE endpoint_id = $1 AND status = 'pending'`,
        [endpointId],
      );
    };
    const id = await stack.publish(tenantId, { stray: true });
    await unnumber();
    // The worker stopped, so that nothing but the sweep called here numbers it (the worker's housekeeping runs the
    // same sweep every few seconds).
    await stack.stopWorker();
    await change(endpointId, { status: 'enabled' });
    expect(await stack.h.services.ownership.numberStrayRows()).toBe(1);
    await stack.startWorker();
    await settled(id);
    expect(sequences('/stray')).toEqual([2]);

    // With the worker running: the stray row is never sent without its number; the worker's housekeeping gives it
    // the next one (4: its admission took 3 before the test took it away, which a real stray admission never does).
    await change(endpointId, { status: 'paused' });
    const next = await stack.publish(tenantId, { stray: 2 });
    await unnumber();
    await change(endpointId, { status: 'enabled' });
    await settled(next);
    expect(sequences('/stray')).toEqual([2, 4]);
  });

  it('refuses more than one delivery at a time on an ordered endpoint, and unknown values', async () => {
    const tenant = await post(stack.h, '/tenants', { external_id: 't-refuse', name: 'refuse' });
    const url = `${stack.base}/refuse`;
    const wide = await post(stack.h, '/endpoints', {
      tenant_id: tenant.json.id,
      url,
      ordering: 'ordered',
      max_concurrency: 2,
    });
    expect(wide.status).toBe(422);
    expect(wide.json).toMatchObject({ error: { code: 'invalid_field', field: 'max_concurrency' } });
    const odd = await post(stack.h, '/endpoints', { tenant_id: tenant.json.id, url, ordering: 'fifo' });
    expect(odd.json).toMatchObject({ error: { code: 'invalid_field', field: 'ordering' } });
    const plain = await post(stack.h, '/endpoints', { tenant_id: tenant.json.id, url });
    expect(plain.status).toBe(201);
    expect('ordering' in plain.json).toBe(false);
    const widened = await change(plain.json.id as string, { ordering: 'ordered', max_concurrency: 3 });
    expect(widened.json).toMatchObject({ error: { code: 'invalid_field', field: 'max_concurrency' } });
    const onFailure = await change(plain.json.id as string, { ordering_on_failure: 'stop' });
    expect(onFailure.json).toMatchObject({ error: { code: 'invalid_field', field: 'ordering_on_failure' } });
  });
});

describe('ordered endpoints over GraphQL', () => {
  it('create and update take ordering and orderingOnFailure; reads show them', async () => {
    const graphql = graphqlClient(stack.h);
    const tenant = await post(stack.h, '/tenants', { external_id: 't-gql-ordered', name: 'gql' });
    const created = await graphql(
      `
        mutation ($input: CreateEndpointInput!) {
          createEndpoint(input: $input) {
            endpoint {
              id
              etag
              ordering
              orderingOnFailure
              maxConcurrency
            }
          }
        }
      `,
      { input: { tenantId: tenant.json.id, url: `${stack.base}/gql`, ordering: 'ordered', orderingOnFailure: 'hold' } },
    );
    const endpoint = created.body.data.createEndpoint.endpoint;
    expect(endpoint).toMatchObject({ ordering: 'ordered', orderingOnFailure: 'hold', maxConcurrency: 1 });
    const updated = await graphql(
      `
        mutation ($id: ID!, $etag: String!) {
          updateEndpoint(id: $id, etag: $etag, input: { ordering: none, maxConcurrency: 2 }) {
            ordering
            maxConcurrency
          }
        }
      `,
      { id: endpoint.id, etag: endpoint.etag },
    );
    expect(updated.body.data.updateEndpoint).toEqual({ ordering: 'none', maxConcurrency: 2 });
    // A value outside the enum is refused by GraphQL before any resolver runs.
    const odd = await graphql(
      `mutation { updateEndpoint(id: "${endpoint.id}", etag: "x", input: { ordering: fifo }) { id } }`,
    );
    expect(odd.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
