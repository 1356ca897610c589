import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';
import { graphqlClient } from '../graphql/test-client.js';

/**
 * What support needs to find a delivery (issue 28, docs/deliveries.md): an ordered delivery's sequence number on the
 * delivery and as a list filter, a failure and its failed replays as one dead-letter row with the earlier generations
 * beside it, and where a delivery went (the endpoint's name and the URL of the revision its attempt used).
 */
let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;

beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  await post(h, '/event_types', { name: 'order.created' });
  tenantId = (await post(h, '/tenants', { external_id: 'lookup', name: 'Lookup' })).json.id as string;
});
afterAll(async () => {
  await h.close();
});

async function createEndpoint(body: Record<string, unknown>): Promise<{ id: string; etag: string }> {
  const created = await post(h, '/endpoints', { tenant_id: tenantId, ...body });
  expect(created.status, created.text).toBe(201);
  return { id: created.json.id as string, etag: created.headers.get('etag')! };
}

/** Publishes one message and answers its delivery to `endpointId`. */
async function deliveryOf(endpointId: string, n: number): Promise<string> {
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: { n } });
  expect(message.status, message.text).toBe(202);
  const listed = await h.request('GET', `/deliveries?message_id=${message.json.id}&endpoint_id=${endpointId}`);
  expect(listed.json.data, listed.text).toHaveLength(1);
  return listed.json.data[0].id as string;
}

/** One attempt the way the worker makes it: the engine's claim, then its settlement of the given answer. */
async function attempt(deliveryId: string, status: number): Promise<void> {
  const steps = new EngineSteps(h.services);
  const [claimed] = await steps.claim([deliveryId]);
  expect(claimed?.deliveryId).toBe(deliveryId);
  await steps.settle([
    {
      attempt: claimed!,
      result: { kind: 'response', status, retryAfterSeconds: null },
      durationMs: 5,
      responseBody: null,
      jitter: 0,
    },
  ]);
}

async function listedIds(query: string): Promise<string[]> {
  const page = await h.request('GET', `/deliveries?${query}&limit=200`);
  expect(page.status, page.text).toBe(200);
  return page.json.data.map((d: { id: string }) => d.id);
}

describe('sequence numbers of ordered deliveries', () => {
  it('are on the delivery (REST only when numbered, GraphQL) and filter the list by endpoint', async () => {
    const ordered = await createEndpoint({ url: 'https://ordered.example.com/hook', ordering: 'ordered' });
    const plain = await createEndpoint({ url: 'https://plain.example.com/hook' });
    const ids = [await deliveryOf(ordered.id, 1), await deliveryOf(ordered.id, 2), await deliveryOf(ordered.id, 3)];
    const numbers = await Promise.all(
      ids.map(async (id) => (await h.request('GET', `/deliveries/${id}`)).json.sequence as number),
    );
    expect(numbers).toEqual([1, 2, 3]);

    const unordered = await h.request('GET', `/deliveries/${await deliveryOf(plain.id, 4)}`);
    expect(unordered.status).toBe(200);
    expect(unordered.json).not.toHaveProperty('sequence');

    expect(await listedIds(`endpoint_id=${ordered.id}&sequence=2`)).toEqual([ids[1]]);
    expect(await listedIds(`endpoint_id=${plain.id}&sequence=1`)).toEqual([]);

    const read = await gql(
      `query($endpointId: ID, $sequence: Float) {
        deliveries(endpointId: $endpointId, sequence: $sequence) { nodes { id sequence } }
      }`,
      { endpointId: ordered.id, sequence: 3 },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.deliveries.nodes).toEqual([{ id: ids[2], sequence: 3 }]);
  });

  it('refuses a sequence without its endpoint or that is not a positive whole number', async () => {
    const alone = await h.request('GET', '/deliveries?sequence=2');
    expect(alone.status).toBe(422);
    expect(alone.json.error).toMatchObject({ code: 'invalid_field', field: 'sequence' });
    const ordered = await createEndpoint({ url: 'https://ordered.example.com/refusals', ordering: 'ordered' });
    for (const bad of ['0', '-1', '1.5', 'abc', '1e3']) {
      const refused = await h.request('GET', `/deliveries?endpoint_id=${ordered.id}&sequence=${bad}`);
      expect(refused.status, bad).toBe(422);
      expect(refused.json.error.field, bad).toBe('sequence');
    }
  });
});

describe('dead letters by generation', () => {
  it('list a failure and its failed replays once, the newest, with the earlier generations beside it', async () => {
    const endpoint = await createEndpoint({ url: 'https://failing.example.com/hook' });
    const original = await deliveryOf(endpoint.id, 10);
    await attempt(original, 400);
    const replayed = await post(h, `/deliveries/${original}/replay`, {});
    expect(replayed.status, replayed.text).toBe(202);
    const replay = replayed.json.id as string;
    await attempt(replay, 400);
    const alone = await deliveryOf(endpoint.id, 11);
    await attempt(alone, 400);

    const base = `endpoint_id=${endpoint.id}&status=failed`;
    expect((await listedIds(base)).sort()).toEqual([original, replay, alone].sort());
    expect((await listedIds(`${base}&latest_generation=true`)).sort()).toEqual([replay, alone].sort());
    expect((await listedIds(`${base}&latest_generation=false`)).sort()).toEqual([original, replay, alone].sort());

    const noStatus = await h.request('GET', `/deliveries?endpoint_id=${endpoint.id}&latest_generation=true`);
    expect(noStatus.status).toBe(422);
    expect(noStatus.json.error).toMatchObject({ code: 'invalid_field', field: 'latest_generation' });

    const read = await gql(
      `query($endpointId: ID) {
        deliveries(endpointId: $endpointId, status: failed, latestGeneration: true, order: newest) {
          nodes { id generation earlierGenerations { id generation status } }
        }
      }`,
      { endpointId: endpoint.id },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.deliveries.nodes).toEqual([
      { id: alone, generation: 0, earlierGenerations: [] },
      { id: replay, generation: 1, earlierGenerations: [{ id: original, generation: 0, status: 'failed' }] },
    ]);
  });
});

describe('earlier generations', () => {
  it('are a summary of the newest 10, newest first, however often a message was replayed', async () => {
    const endpoint = await createEndpoint({ url: 'https://replayed.example.com/hook' });
    const original = await deliveryOf(endpoint.id, 50);
    await attempt(original, 400);
    let newest = original;
    for (let n = 0; n < 12; n += 1) {
      const replayed = await post(h, `/deliveries/${original}/replay`, {});
      expect(replayed.status, replayed.text).toBe(202);
      newest = replayed.json.id as string;
    }
    const read = await gql(`query($id: ID!) { delivery(id: $id) { generation earlierGenerations { generation } } }`, {
      id: newest,
    });
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.delivery.generation).toBe(12);
    expect(read.body.data.delivery.earlierGenerations.map((g: { generation: number }) => g.generation)).toEqual([
      11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
    ]);
  });
});

describe('where a delivery went', () => {
  const TARGET = `query($id: ID!) { delivery(id: $id) { target { endpointName url urlRevision urlRecorded } } }`;

  async function targetOf(id: string): Promise<unknown> {
    const read = await gql(TARGET, { id });
    expect(read.body.errors).toBeUndefined();
    return read.body.data.delivery.target;
  }

  it('names the endpoint and the URL of the revision the attempt used, after the URL changed', async () => {
    const endpoint = await createEndpoint({ url: 'https://first.example.com/hook?token=a', name: 'Billing' });
    const before = await deliveryOf(endpoint.id, 20);
    await attempt(before, 500);
    const patched = await h.request('PATCH', `/endpoints/${endpoint.id}`, {
      body: { url: 'https://first.example.com/v2' },
      ifMatch: endpoint.etag,
    });
    expect(patched.status, patched.text).toBe(200);
    const after = await deliveryOf(endpoint.id, 21);

    expect(await targetOf(before)).toEqual({
      endpointName: 'Billing',
      url: 'https://first.example.com/hook?token=a',
      urlRevision: 1,
      urlRecorded: true,
    });
    // Not attempted yet: where its next attempt goes.
    expect(await targetOf(after)).toEqual({
      endpointName: 'Billing',
      url: 'https://first.example.com/v2',
      urlRevision: 2,
      urlRecorded: true,
    });
    await attempt(after, 200);
    expect(await targetOf(after)).toMatchObject({ url: 'https://first.example.com/v2', urlRevision: 2 });
  });

  it('shows the current URL, marked, for a revision recorded before URLs were kept', async () => {
    const endpoint = await createEndpoint({ url: 'https://old.example.com/hook' });
    const delivery = await deliveryOf(endpoint.id, 30);
    await attempt(delivery, 500);
    const patched = await h.request('PATCH', `/endpoints/${endpoint.id}`, {
      body: { url: 'https://old.example.com/new' },
      ifMatch: endpoint.etag,
    });
    expect(patched.status, patched.text).toBe(200);
    // Migration 0038 records only each endpoint's revision of that moment: older ones have no row.
    await h.services.db.query(`DELETE FROM endpoint_url_revisions WHERE endpoint_id = $1 AND url_revision = 1`, [
      endpoint.id,
    ]);
    expect(await targetOf(delivery)).toEqual({
      endpointName: 'Webhook',
      url: 'https://old.example.com/new',
      urlRevision: 1,
      urlRecorded: false,
    });
  });

  it('is read for a page of deliveries in one statement', async () => {
    const endpoint = await createEndpoint({ url: 'https://many.example.com/hook', name: 'Many' });
    for (let n = 0; n < 5; n += 1) await deliveryOf(endpoint.id, 40 + n);
    const read = await gql(
      `query($endpointId: ID) { deliveries(endpointId: $endpointId) { nodes { id target { endpointName url } } } }`,
      { endpointId: endpoint.id },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.deliveries.nodes).toHaveLength(5);
    for (const node of read.body.data.deliveries.nodes)
      expect(node.target).toEqual({ endpointName: 'Many', url: 'https://many.example.com/hook' });
  });
});
