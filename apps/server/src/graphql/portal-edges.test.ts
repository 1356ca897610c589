import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateEventTypeInput, parseInput, RawJson } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

/**
 * The receivers' portal's edges (docs/portal.md): what a portal session shares with its operator, and what it must
 * not. Each describe is one of the edges.
 */
let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
beforeAll(async () => {
  h = await startHarness({ consoleUrl: 'https://console.example.com' });
  gql = graphqlClient(h);
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  await post(h, '/event_types', { name: 'order.created' });
});
afterAll(async () => {
  await h.close();
});

let tenants = 0;

/** A tenant and an opened portal session for it (the console's exchange of the one-time link). */
async function portalSession(
  body: Record<string, unknown> = {},
  key = h.team.key,
): Promise<{ tenantId: string; token: string }> {
  tenants += 1;
  const tenant = await post(h, '/tenants', { external_id: `edge-${tenants}`, name: `Edge ${tenants}` }, { key });
  const created = await post(
    h,
    `/tenants/${tenant.json.id}/portal_sessions`,
    { capabilities: 'manage_endpoints', ...body },
    { key },
  );
  expect(created.status, created.text).toBe(201);
  const opened = await gql(
    `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
    { t: new URL(created.json.url).searchParams.get('token') },
    { key: null },
  );
  return { tenantId: tenant.json.id as string, token: opened.body.data.openPortalSession.token as string };
}

const CREATE_ENDPOINT = `mutation($key: String, $url: String!) {
  portalCreateEndpoint(input: { url: $url }, idempotencyKey: $key) { endpoint { id tenantId } signingSecret } }`;

describe('idempotency keys are scoped by who made the request', () => {
  it("a portal session cannot squat a key the operator's scripts use later", async () => {
    const { tenantId, token } = await portalSession();
    // The tenant guesses a key the operator's deploy script will use and spends it first.
    const squatted = 'deploy-2026-11-02-order-1';
    const portal = await gql(CREATE_ENDPOINT, { key: squatted, url: 'https://squat.example.com/hook' }, { key: token });
    expect(portal.body.errors).toBeUndefined();
    // The operator's publish under that key runs (202), and a retry of it replays its own answer.
    const body = { tenant_id: tenantId, event_type: 'order.created', payload: { n: 1 } };
    const published = await h.request('POST', '/messages', { idempotencyKey: squatted, body });
    expect(published.status, published.text).toBe(202);
    const again = await h.request('POST', '/messages', { idempotencyKey: squatted, body });
    expect(again.json.id).toBe(published.json.id);
    // And the other way round: a key the operator used is still free for the portal session.
    const operator = await h.request('POST', '/messages', {
      idempotencyKey: 'operator-used-key',
      body: { ...body, payload: { n: 2 } },
    });
    expect(operator.status).toBe(202);
    const portalAfter = await gql(
      CREATE_ENDPOINT,
      { key: 'operator-used-key', url: 'https://after.example.com/hook' },
      { key: token },
    );
    expect(portalAfter.body.errors).toBeUndefined();
  });

  it("two tenants' sessions with the same key and input each get their own endpoint, never the other's secret", async () => {
    const a = await portalSession();
    const b = await portalSession();
    const args = { key: 'portal-form-1', url: 'https://same.example.com/hook' };
    const first = await gql(CREATE_ENDPOINT, args, { key: a.token });
    const second = await gql(CREATE_ENDPOINT, args, { key: b.token });
    const created = [first, second].map((r) => r.body.data.portalCreateEndpoint);
    expect(created.map((c) => c.endpoint.tenantId)).toEqual([a.tenantId, b.tenantId]);
    expect(created[1].endpoint.id).not.toBe(created[0].endpoint.id);
    expect(created[1].signingSecret).not.toBe(created[0].signingSecret);
    // The retry of each session replays its own answer, its own secret shown again.
    const retried = await gql(CREATE_ENDPOINT, args, { key: a.token });
    expect(retried.body.data.portalCreateEndpoint).toEqual(created[0]);
  });
});

describe("portal sessions spend their own rate buckets, never their operator's", () => {
  it("four busy sessions do not empty the team's configuration-write bucket; each is held to its own", async () => {
    // A team of its own: the harness clock stands still, so buckets do not refill during the test.
    const team = await h.newTeam('busy-portals');
    const sessions = [];
    for (let i = 0; i < 4; i += 1) sessions.push(await portalSession({}, team.key));
    // 8 of the team's 40 configuration-write tokens are spent (a tenant and a session each).
    const write = `mutation { portalDeleteEndpoint(id: "wde_0000000000000000000000000", etag: "x") }`;
    const codes = async (token: string, n: number) => {
      const seen: string[] = [];
      for (let i = 0; i < n; i += 1)
        seen.push((await gql(write, {}, { key: token })).body.errors?.[0]?.extensions?.code ?? 'ok');
      return seen;
    };
    // Ten configuration writes each: 40 tokens, more than the team has left.
    for (const session of sessions) expect(new Set(await codes(session.token, 10))).toEqual(new Set(['not_found']));
    const operator = await post(h, '/tenants', { external_id: 'busy-operator', name: 'Operator' }, { key: team.key });
    expect(operator.status, operator.text).toBe(201);
    // One session bursts on: its own bucket (the team's rate, burst 40) runs dry at its 41st write, the others' not.
    expect(await codes(sessions[0]!.token, 31)).toEqual([...Array(30).fill('not_found'), 'rate_limited']);
    expect(await codes(sessions[1]!.token, 1)).toEqual(['not_found']);
    const after = await post(h, '/tenants', { external_id: 'busy-operator-2', name: 'Operator' }, { key: team.key });
    expect(after.status, after.text).toBe(201);
  });
});

describe("test events from the portal are held to the session's spending cap", () => {
  const createEndpoint = async (token: string) =>
    (await gql(CREATE_ENDPOINT, { url: 'https://tests.example.com/hook' }, { key: token })).body.data
      .portalCreateEndpoint.endpoint.id as string;
  const sendTest = async (token: string, endpointId: string) =>
    (
      await gql(
        `mutation($id: ID!) { portalSendTestEvent(endpointId: $id) { id } }`,
        { id: endpointId },
        { key: token },
      )
    ).body;
  const spent = async (token: string) =>
    (await gql(`{ portalContext { session { spentUsd } } }`, {}, { key: token })).body.data.portalContext.session
      .spentUsd as string;
  const messages = async (token: string) =>
    (await gql(`{ portalMessages { nodes { id } } }`, {}, { key: token })).body.data.portalMessages.nodes.length;

  it('each test takes its price (ingestion and one delivery) from the cap; one past it is refused and not sent', async () => {
    // 100 micro-USD: one test costs 60 (an ingestion unit, 10, and a delivery unit, 50).
    const { token } = await portalSession({ spending_cap_usd: '0.0001' });
    const endpointId = await createEndpoint(token);
    expect((await sendTest(token, endpointId)).errors).toBeUndefined();
    expect(await spent(token)).toBe('0.00006');
    const refused = await sendTest(token, endpointId);
    expect(refused.errors[0].extensions.code).toBe('spending_limit');
    expect(refused.errors[0].message).toBe(
      'this test event costs 0.00006 USD and the portal session has 0.00004 USD left of its cap',
    );
    expect({ spent: await spent(token), messages: await messages(token) }).toEqual({ spent: '0.00006', messages: 1 });
  });

  it('a session with the default cap ("0") sends none; a refused admission gives its price back', async () => {
    const unpaid = await portalSession();
    const endpointId = await createEndpoint(unpaid.token);
    expect((await sendTest(unpaid.token, endpointId)).errors[0].extensions.code).toBe('spending_limit');
    expect(await messages(unpaid.token)).toBe(0);

    const paid = await portalSession({ spending_cap_usd: '1' });
    const paused = await createEndpoint(paid.token);
    const etag = (
      await gql(`query($id: ID!) { portalEndpoint(id: $id) { etag } }`, { id: paused }, { key: paid.token })
    ).body.data.portalEndpoint.etag as string;
    const pause = await gql(
      `mutation($id: ID!, $etag: String!) {
        portalUpdateEndpoint(id: $id, etag: $etag, input: { status: "paused" }) { status } }`,
      { id: paused, etag },
      { key: paid.token },
    );
    expect(pause.body.data.portalUpdateEndpoint.status).toBe('paused');
    expect((await sendTest(paid.token, paused)).errors[0].extensions.code).toBe('invalid_state');
    expect(await spent(paid.token)).toBe('0');
  });
});

describe("the portal's event catalog is read a page at a time", () => {
  it('pages the examples by name and offers every name on its own, without the examples', async () => {
    // A team with 60 event types whose examples are near their 16 KiB limit (one archived, one another's).
    const team = await h.newTeam('big-catalog');
    const ctx = { actor: { teamId: team.teamId, keyId: team.keyId } };
    const example = new RawJson(`{"blob":"${'x'.repeat(16_000)}"}`);
    const names = Array.from({ length: 60 }, (_, i) => `catalog.t${String(i).padStart(2, '0')}`);
    for (const name of [...names, 'catalog.archived'])
      await h.services.eventTypes.createEventType(ctx, parseInput(CreateEventTypeInput, { name, example }));
    const archived = await h.services.eventTypes.listEventTypes(ctx, { name: 'catalog.archived' });
    await h.services.eventTypes.archiveEventType(ctx, archived.data[0]!.id, archived.data[0]!.etag);
    const { token } = await portalSession({}, team.key);

    const page = `query($after: String) {
      portalEventTypes(first: 25, after: $after) { nodes { name example } nextCursor } }`;
    const seen: string[] = [];
    const sizes: number[] = [];
    let after: string | null = null;
    do {
      const answer = await gql(page, { after }, { key: token });
      sizes.push(JSON.stringify(answer.body).length);
      const { nodes, nextCursor } = answer.body.data.portalEventTypes as {
        nodes: { name: string; example: string }[];
        nextCursor: string | null;
      };
      expect(nodes.every((node) => node.example === example.text)).toBe(true);
      seen.push(...nodes.map((node) => node.name));
      after = nextCursor;
    } while (after !== null);
    expect(seen).toEqual(names);
    // A page carries its 25 examples, not the catalog's 60 (about 400 KB of them against 960 KB).
    expect(Math.max(...sizes)).toBeLessThan(26 * 16_100);
    const onlyNames = await gql(`{ portalEventTypeNames }`, {}, { key: token });
    expect(onlyNames.body.data.portalEventTypeNames).toEqual(names);
    // A cursor of another list is refused, as on every list.
    const foreign = await gql(page, { after: 'eyJzIjoieCIsImEiOiJ5In0' }, { key: token });
    expect(foreign.body.errors[0].extensions.code).toBe('invalid_cursor');
  });
});

describe("a portal session finds its tenant's messages and sees where each delivery went", () => {
  it('searches by external ID and event type, newest first, never another tenant’s', async () => {
    const mine = await portalSession();
    const other = await portalSession();
    await post(h, '/event_types', { name: 'order.paid' });
    const publish = async (tenantId: string, eventType: string, externalId: string) => {
      const published = await post(h, '/messages', {
        tenant_id: tenantId,
        event_type: eventType,
        external_id: externalId,
        payload: {},
      });
      expect(published.status, published.text).toBe(202);
      h.clock.advance(1_000);
      return published.json.id as string;
    };
    const first = await publish(mine.tenantId, 'order.created', 'ord_1');
    const second = await publish(mine.tenantId, 'order.paid', 'ord_1');
    const third = await publish(mine.tenantId, 'order.created', 'ord_2');
    await publish(other.tenantId, 'order.created', 'ord_1');
    const search = async (variables: Record<string, string>) => {
      const found = await gql(
        `query($externalId: String, $eventType: String) {
          portalMessages(externalId: $externalId, eventType: $eventType) { nodes { id externalId eventType } }
        }`,
        variables,
        { key: mine.token },
      );
      expect(found.body.errors).toBeUndefined();
      return found.body.data.portalMessages.nodes.map((node: { id: string }) => node.id);
    };
    expect(await search({ externalId: 'ord_1' })).toEqual([second, first]);
    expect(await search({ eventType: 'order.created' })).toEqual([third, first]);
    expect(await search({ externalId: 'ord_1', eventType: 'order.paid' })).toEqual([second]);
  });

  it("shows each delivery's endpoint name and URL", async () => {
    const { tenantId, token } = await portalSession();
    const endpoint = await gql(
      `mutation($url: String!) { portalCreateEndpoint(input: { url: $url, name: "Orders" }) { endpoint { id } } }`,
      { url: 'https://orders.example.com/hook' },
      { key: token },
    );
    expect(endpoint.body.errors).toBeUndefined();
    const published = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: {} });
    const read = await gql(
      `query($id: ID!) { portalMessage(id: $id) { deliveries { nodes { endpointId target { endpointName url } } } } }`,
      { id: published.json.id },
      { key: token },
    );
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.portalMessage.deliveries.nodes).toEqual([
      {
        endpointId: endpoint.body.data.portalCreateEndpoint.endpoint.id,
        target: { endpointName: 'Orders', url: 'https://orders.example.com/hook' },
      },
    ]);
  });
});
