import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';
import { graphqlClient } from '../graphql/test-client.js';

/**
 * Dead letters a replay repaired (docs/deliveries.md): the delivery names the generation that succeeded
 * (`repaired_by`), the dead-letter list can leave them out (`repaired=false`), the message counts them beside its
 * delivery counts (`repaired_count`) while its status stays the spec's, and the replay quote marks them. A repair is
 * a later generation of the same message to the same endpoint that succeeded, the generations bulk replays go by.
 */
let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;
let endpointA: string;
let endpointB: string;

const answer = (status: number): AttemptResult => ({ kind: 'response', status, retryAfterSeconds: null });

/** One attempt the way the worker makes it: the engine's claim, then its settlement of the given answer. */
async function attempt(deliveryId: string, status: number): Promise<void> {
  const steps = new EngineSteps(h.services);
  const [claimed] = await steps.claim([deliveryId]);
  expect(claimed?.deliveryId).toBe(deliveryId);
  await steps.settle([{ attempt: claimed!, result: answer(status), durationMs: 5, responseBody: null, jitter: 0 }]);
}

/** A message to both endpoints whose two original deliveries failed; their IDs by endpoint. */
async function failedMessage(n: number): Promise<{ messageId: string; a: string; b: string }> {
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: { n } });
  expect(message.status, message.text).toBe(202);
  const listed = await h.request('GET', `/deliveries?message_id=${message.json.id}`);
  const byEndpoint = new Map(listed.json.data.map((d: { endpoint_id: string; id: string }) => [d.endpoint_id, d.id]));
  const a = byEndpoint.get(endpointA) as string;
  const b = byEndpoint.get(endpointB) as string;
  await attempt(a, 400);
  await attempt(b, 400);
  return { messageId: message.json.id, a, b };
}

async function replay(deliveryId: string): Promise<string> {
  const replayed = await post(h, `/deliveries/${deliveryId}/replay`, {});
  expect(replayed.status, replayed.text).toBe(202);
  return replayed.json.id as string;
}

async function repairedBy(deliveryId: string): Promise<string | null> {
  const read = await h.request('GET', `/deliveries/${deliveryId}`);
  expect(read.status, read.text).toBe(200);
  return read.json.repaired_by;
}

async function listed(query: string): Promise<string[]> {
  const page = await h.request('GET', `/deliveries?${query}&limit=200`);
  expect(page.status, page.text).toBe(200);
  return page.json.data.map((d: { id: string }) => d.id);
}

// m1: A's original failed, its replay succeeded. m2: A's first replay failed too, a second one succeeded.
// m3: A's replay is still queued. m4: nothing replayed. B's originals all failed and were never replayed.
let m1: Awaited<ReturnType<typeof failedMessage>>;
let m2: Awaited<ReturnType<typeof failedMessage>>;
let m3: Awaited<ReturnType<typeof failedMessage>>;
let m4: Awaited<ReturnType<typeof failedMessage>>;
let m1Replay: string;
let m2FirstReplay: string;
let m2SecondReplay: string;
let m3Replay: string;

beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  await post(h, '/event_types', { name: 'order.created' });
  tenantId = (await post(h, '/tenants', { external_id: 'repaired', name: 'Repaired' })).json.id;
  endpointA = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/a' })).json.id;
  endpointB = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/b' })).json.id;
  m1 = await failedMessage(1);
  m2 = await failedMessage(2);
  m3 = await failedMessage(3);
  m4 = await failedMessage(4);
  m1Replay = await replay(m1.a);
  await attempt(m1Replay, 200);
  m2FirstReplay = await replay(m2.a);
  await attempt(m2FirstReplay, 400);
  m2SecondReplay = await replay(m2FirstReplay);
  await attempt(m2SecondReplay, 200);
  m3Replay = await replay(m3.a);
});
afterAll(async () => {
  await h.close();
});

describe('repaired dead letters', () => {
  it('a delivery names the later generation that succeeded; nothing else is marked', async () => {
    expect(await repairedBy(m1.a)).toBe(m1Replay);
    // Both dead letters of m2's chain are repaired by the generation that succeeded.
    expect(await repairedBy(m2.a)).toBe(m2SecondReplay);
    expect(await repairedBy(m2FirstReplay)).toBe(m2SecondReplay);
    // A replay still pending repairs nothing yet; a replay to one endpoint repairs nothing of another.
    expect(await repairedBy(m3.a)).toBeNull();
    expect(await repairedBy(m4.a)).toBeNull();
    for (const other of [m1.b, m2.b, m3.b, m4.b]) expect(await repairedBy(other)).toBeNull();
    // Only dead letters are repaired: the succeeded replay itself and the pending one are not.
    expect(await repairedBy(m1Replay)).toBeNull();
    expect(await repairedBy(m3Replay)).toBeNull();
    // The status stays the spec's.
    expect((await h.request('GET', `/deliveries/${m1.a}`)).json.status).toBe('failed');
  });

  it('GET /deliveries?repaired= leaves the repaired dead letters out, or lists only them', async () => {
    const deadLetters = await listed(`endpoint_id=${endpointA}&status=failed`);
    expect(deadLetters.sort()).toEqual([m1.a, m2.a, m2FirstReplay, m3.a, m4.a].sort());
    expect((await listed(`endpoint_id=${endpointA}&status=failed&repaired=false`)).sort()).toEqual([m3.a, m4.a].sort());
    expect((await listed(`endpoint_id=${endpointA}&status=failed&repaired=true`)).sort()).toEqual(
      [m1.a, m2.a, m2FirstReplay].sort(),
    );
    // Newest first too, and without a status filter (deliveries that are no dead letters are never repaired).
    expect(await listed(`endpoint_id=${endpointA}&status=failed&repaired=false&order=newest`)).toEqual([m4.a, m3.a]);
    expect((await listed(`tenant_id=${tenantId}&repaired=true`)).sort()).toEqual([m1.a, m2.a, m2FirstReplay].sort());
    expect(await listed(`tenant_id=${tenantId}&repaired=false`)).toHaveLength(8 + 4 - 3);

    const bad = await h.request('GET', '/deliveries?repaired=yes');
    expect(bad.status).toBe(422);
    expect(bad.json.error).toMatchObject({ code: 'invalid_field', field: 'repaired' });
    // The filter is part of the cursor.
    const first = await h.request('GET', `/deliveries?status=failed&repaired=false&limit=1`);
    const crossed = await h.request('GET', `/deliveries?status=failed&limit=1&cursor=${first.json.next_cursor}`);
    expect(crossed.json.error.code).toBe('invalid_cursor');
  });

  it('the bulk replay takes none of the repaired dead letters', async () => {
    // Of A's dead letters, bulk replay takes those without a later generation: m4 only (m3 waits for its replay).
    const estimate = await h.request('POST', '/replays', { body: { endpoint_id: endpointA, dry_run: true } });
    expect(estimate.status, estimate.text).toBe(200);
    expect(estimate.json.matched).toBe(1);
    const unrepaired = await listed(`endpoint_id=${endpointA}&status=failed&repaired=false`);
    expect(unrepaired).toContain(m4.a);
    expect(await listed(`endpoint_id=${endpointA}&status=failed&repaired=true`)).not.toContain(m4.a);
  });

  it('a message counts its repaired deliveries beside delivery_counts; its status stays failed', async () => {
    const read = async (messageId: string) => (await h.request('GET', `/messages/${messageId}`)).json;
    const first = await read(m1.messageId);
    expect(first.status).toBe('failed');
    expect(first.delivery_counts.failed).toBe(2);
    expect(first.repaired_count).toBe(1);
    expect((await read(m2.messageId)).repaired_count).toBe(1);
    expect((await read(m3.messageId)).repaired_count).toBe(0);
    expect((await read(m4.messageId)).repaired_count).toBe(0);
    const page = await h.request('GET', `/messages?tenant_id=${tenantId}&order=newest`);
    expect(page.json.data.map((m: { id: string; repaired_count: number }) => [m.id, m.repaired_count])).toEqual([
      [m4.messageId, 0],
      [m3.messageId, 0],
      [m2.messageId, 1],
      [m1.messageId, 1],
    ]);
    const published = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: {} });
    expect(published.json.repaired_count).toBe(0);
  });

  it('GraphQL: repairedBy, deliveries(repaired:), repairedCount and the replay quote', async () => {
    const read = await gql(
      `query($id: ID!, $message: ID!, $endpoint: ID) {
        delivery(id: $id) { id status repairedBy }
        message(id: $message) { status repairedCount deliveryCounts { failed } deliveries { nodes { id repairedBy } } }
        deliveries(endpointId: $endpoint, status: failed, repaired: false, order: newest) { nodes { id } }
      }`,
      { id: m1.a, message: m1.messageId, endpoint: endpointA },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.delivery).toEqual({ id: m1.a, status: 'failed', repairedBy: m1Replay });
    expect(read.body.data.message).toMatchObject({ status: 'failed', repairedCount: 1, deliveryCounts: { failed: 2 } });
    const nested = new Map(
      read.body.data.message.deliveries.nodes.map((d: { id: string; repairedBy: string | null }) => [
        d.id,
        d.repairedBy,
      ]),
    );
    expect(Object.fromEntries(nested)).toEqual({ [m1.a]: m1Replay, [m1.b]: null, [m1Replay]: null });
    expect(read.body.data.deliveries.nodes.map((d: { id: string }) => d.id)).toEqual([m4.a, m3.a]);

    const quote = await gql(
      `query($ids: [ID!]!) {
        replayQuote(deliveryIds: $ids) {
          items { deliveryId replayable errorCode deliveryUnits totalUsd repairedBy }
          deliveryUnits totalUsd repairedCount unrepairedDeliveryUnits unrepairedTotalUsd
        }
      }`,
      { ids: [m1.a, m4.a, m2FirstReplay] },
    );
    expect(quote.body.errors).toBeUndefined();
    const { items, ...totals } = quote.body.data.replayQuote;
    // Still replayable (a replay of it is allowed, and charged): the quote marks it, the console leaves it out.
    expect(items.map((item: { deliveryId: string; replayable: boolean; repairedBy: string | null }) => item)).toEqual([
      expect.objectContaining({ deliveryId: m1.a, replayable: true, errorCode: null, repairedBy: m1Replay }),
      expect.objectContaining({ deliveryId: m4.a, replayable: true, errorCode: null, repairedBy: null }),
      expect.objectContaining({ deliveryId: m2FirstReplay, replayable: true, repairedBy: m2SecondReplay }),
    ]);
    expect(totals.deliveryUnits).toBe(3);
    expect(totals.repairedCount).toBe(2);
    expect(totals.unrepairedDeliveryUnits).toBe(1);
    expect(totals.unrepairedTotalUsd).toBe(items[1].totalUsd);
    expect(Number(totals.totalUsd)).toBeCloseTo(3 * Number(items[1].totalUsd), 9);
  });
});
