import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
async function portalSession(body: Record<string, unknown> = {}): Promise<{ tenantId: string; token: string }> {
  tenants += 1;
  const tenant = await post(h, '/tenants', { external_id: `edge-${tenants}`, name: `Edge ${tenants}` });
  const created = await post(h, `/tenants/${tenant.json.id}/portal_sessions`, {
    capabilities: 'manage_endpoints',
    ...body,
  });
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
