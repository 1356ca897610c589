import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

/**
 * Stream endpoints through GraphQL over the real server and database (docs/streams.md): the delivery mode on create,
 * stream tokens (shown once, listed, revoked) and the stream URL, through the services the REST routes call. The
 * server sits behind a "proxy", so the stream URL carries the public base URL.
 */
const PUBLIC_BASE = 'https://hooks.svc.test';

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;
beforeAll(async () => {
  h = await startHarness({ publicBaseUrl: PUBLIC_BASE });
  gql = graphqlClient(h);
  const tenant = await gql('mutation { createTenant(input: { externalId: "streams", name: "Streams" }) { id } }');
  tenantId = tenant.body.data.createTenant.id;
});
afterAll(async () => {
  await h.close();
});

const ENDPOINT_FIELDS = `id deliveryMode url streamUrl streamTokens { nodes { id name createdAt lastUsedAt } nextCursor }
  streamConnections { id tokenId openedAt remoteAddress unacknowledged }`;
const CREATE_ENDPOINT = `mutation($input: CreateEndpointInput!) {
  createEndpoint(input: $input) { endpoint { ${ENDPOINT_FIELDS} } signingSecret }
}`;
const GET_ENDPOINT = `query($id: ID!) { endpoint(id: $id) { ${ENDPOINT_FIELDS} } }`;
const CREATE_TOKEN = `mutation($endpointId: ID!, $name: String, $key: String) {
  createStreamToken(endpointId: $endpointId, name: $name, idempotencyKey: $key) {
    streamToken { id name createdAt lastUsedAt } token
  }
}`;
const REVOKE_TOKEN = `mutation($endpointId: ID!, $id: ID!) { revokeStreamToken(endpointId: $endpointId, id: $id) }`;

describe('stream endpoints through GraphQL', () => {
  it('creates a stream endpoint without a URL; its stream URL is on the public base URL', async () => {
    const created = await gql(CREATE_ENDPOINT, { input: { tenantId, deliveryMode: 'stream' } });
    expect(created.body.errors).toBeUndefined();
    const endpoint = created.body.data.createEndpoint.endpoint;
    expect(endpoint).toMatchObject({
      deliveryMode: 'stream',
      url: '',
      streamUrl: `${PUBLIC_BASE}/v1/endpoints/${endpoint.id}/stream`,
      streamTokens: { nodes: [], nextCursor: null },
      streamConnections: [],
    });
    expect(created.body.data.createEndpoint.signingSecret).toMatch(/^whsec_/);
    // The REST representation agrees.
    const rest = await h.request('GET', `/endpoints/${endpoint.id}`);
    expect(rest.json).toMatchObject({ delivery_mode: 'stream' });
    expect(rest.json).not.toHaveProperty('url');
  });

  it('keeps push the default, and a push endpoint has no stream: empty fields, a token refused', async () => {
    const created = await gql(CREATE_ENDPOINT, { input: { tenantId, url: 'https://receiver.example.com/hooks' } });
    const endpoint = created.body.data.createEndpoint.endpoint;
    expect(endpoint).toMatchObject({
      deliveryMode: 'push',
      url: 'https://receiver.example.com/hooks',
      streamUrl: null,
      streamTokens: { nodes: [] },
      streamConnections: [],
    });
    const refused = await gql(CREATE_TOKEN, { endpointId: endpoint.id, name: 'laptop' });
    expect(refused.body.data).toBeNull();
    expect(refused.body.errors[0].extensions.code).toBe('invalid_state');
    // A push endpoint without a URL, or a stream one with a URL, is the service's invalid_field, named.
    const noUrl = await gql(CREATE_ENDPOINT, { input: { tenantId } });
    expect(noUrl.body.errors[0].extensions).toMatchObject({ code: 'invalid_field', field: 'url' });
    const streamWithUrl = await gql(CREATE_ENDPOINT, {
      input: { tenantId, deliveryMode: 'stream', url: 'https://receiver.example.com/hooks' },
    });
    expect(streamWithUrl.body.errors[0].extensions).toMatchObject({ code: 'invalid_field', field: 'url' });
    const unknownMode = await gql(CREATE_ENDPOINT, { input: { tenantId, deliveryMode: 'poll' } });
    expect(unknownMode.body.errors[0].message).toMatch(/DeliveryMode/);
  });

  it('shows a token once (an idempotent replay shows null), lists tokens without it, and revokes', async () => {
    const created = await gql(CREATE_ENDPOINT, { input: { tenantId, deliveryMode: 'stream' } });
    const endpointId: string = created.body.data.createEndpoint.endpoint.id;
    const key = uniqueKey();
    const first = await gql(CREATE_TOKEN, { endpointId, name: 'laptop', key });
    expect(first.body.errors).toBeUndefined();
    const { streamToken, token } = first.body.data.createStreamToken;
    expect(token).toMatch(/^whst_[A-Za-z0-9_-]{43}$/);
    expect(streamToken).toMatchObject({ id: expect.stringMatching(/^wdk_/), name: 'laptop', lastUsedAt: null });

    const replay = await gql(CREATE_TOKEN, { endpointId, name: 'laptop', key });
    expect(replay.body.data.createStreamToken).toEqual({ streamToken, token: null });

    // The token is the endpoint's stream credential (what the stream and its acknowledgements authenticate with).
    expect(await h.services.streamTokens.authenticate(endpointId, token)).toMatchObject({ tokenId: streamToken.id });

    const listed = await gql(GET_ENDPOINT, { id: endpointId });
    expect(listed.body.data.endpoint.streamTokens.nodes).toEqual([
      expect.objectContaining({ id: streamToken.id, name: 'laptop' }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const revoked = await gql(REVOKE_TOKEN, { endpointId, id: streamToken.id });
    expect(revoked.body).toEqual({ data: { revokeStreamToken: true } });
    const after = await gql(GET_ENDPOINT, { id: endpointId });
    expect(after.body.data.endpoint.streamTokens.nodes).toEqual([]);
    expect(await h.services.streamTokens.authenticate(endpointId, token)).toBeNull();
    const again = await gql(REVOKE_TOKEN, { endpointId, id: streamToken.id });
    expect(again.body.errors[0].extensions.code).toBe('not_found');
  });

  it("lists an endpoint's open connections: since when, from where, with which token, how many unacknowledged", async () => {
    const created = await gql(CREATE_ENDPOINT, { input: { tenantId, deliveryMode: 'stream' } });
    const endpointId: string = created.body.data.createEndpoint.endpoint.id;
    const made = await gql(CREATE_TOKEN, { endpointId, name: 'laptop' });
    const { streamToken, token } = made.body.data.createStreamToken;
    const opened = new AbortController();
    const before = h.clock.now().getTime();
    const stream = await fetch(`${h.baseUrl}/endpoints/${endpointId}/stream`, {
      headers: { authorization: `Bearer ${token}` },
      signal: opened.signal,
    });
    expect(stream.status).toBe(200);
    try {
      const reader = stream.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain(': connected');
      const listed = await gql(GET_ENDPOINT, { id: endpointId });
      const [connection, ...others] = listed.body.data.endpoint.streamConnections;
      expect(others).toEqual([]);
      expect(connection).toMatchObject({
        id: expect.stringMatching(/^wdc_/),
        tokenId: streamToken.id,
        remoteAddress: '127.0.0.1',
        unacknowledged: 0,
      });
      expect(Date.parse(connection.openedAt)).toBeGreaterThanOrEqual(before); // the service clock
    } finally {
      opened.abort();
    }
  });

  it("reaches only the team's own endpoints", async () => {
    const created = await gql(CREATE_ENDPOINT, { input: { tenantId, deliveryMode: 'stream' } });
    const endpointId: string = created.body.data.createEndpoint.endpoint.id;
    const other = await h.newTeam('other');
    const foreign = await gql(CREATE_TOKEN, { endpointId, name: 'x' }, { key: other.key });
    expect(foreign.body.errors[0].extensions.code).toBe('not_found');
  });
});

/** A portal session of a new tenant (docs/portal.md): a link made with the team key, opened without one. */
async function portalSession(externalId: string, capabilities: 'manage_endpoints' | 'read_only') {
  const tenant = await gql(`mutation($e: String!) { createTenant(input: { externalId: $e, name: $e }) { id } }`, {
    e: externalId,
  });
  const portalTenantId: string = tenant.body.data.createTenant.id;
  const created = await gql(
    `mutation($tenantId: ID!, $c: PortalCapabilities!) {
       createPortalSession(tenantId: $tenantId, input: { capabilities: $c }) { url } }`,
    { tenantId: portalTenantId, c: capabilities },
  );
  const linkToken = new URL(created.body.data.createPortalSession.url, 'http://console').searchParams.get('token')!;
  const opened = await gql(
    `mutation($t: String!) { openPortalSession(linkToken: $t) { token } }`,
    { t: linkToken },
    {
      key: null,
    },
  );
  return { tenantId: portalTenantId, token: opened.body.data.openPortalSession.token as string };
}

describe("stream endpoints in the receivers' portal", () => {
  const PORTAL_CREATE = `mutation($input: PortalEndpointInput!) {
    portalCreateEndpoint(input: $input) { endpoint { id tenantId deliveryMode url } signingSecret }
  }`;
  const PORTAL_STREAM = `query($id: ID!) {
    portalEndpointStream(endpointId: $id) {
      streamUrl connections { id } tokens { nodes { id name } nextCursor }
    }
  }`;
  const PORTAL_CREATE_TOKEN = `mutation($id: ID!, $name: String) {
    portalCreateStreamToken(endpointId: $id, name: $name) { streamToken { id name } token }
  }`;
  const PORTAL_REVOKE = `mutation($id: ID!, $token: ID!) { portalRevokeStreamToken(endpointId: $id, id: $token) }`;

  it("creates a stream endpoint of the session's tenant, shows its stream, and makes and revokes tokens, recorded", async () => {
    const portal = await portalSession('portal-streams', 'manage_endpoints');
    const as = { key: portal.token };
    const created = await gql(PORTAL_CREATE, { input: { deliveryMode: 'stream' } }, as);
    expect(created.body.errors).toBeUndefined();
    const endpoint = created.body.data.portalCreateEndpoint.endpoint;
    expect(endpoint).toMatchObject({ tenantId: portal.tenantId, deliveryMode: 'stream', url: '' });

    const token = await gql(PORTAL_CREATE_TOKEN, { id: endpoint.id, name: 'office' }, as);
    expect(token.body.errors).toBeUndefined();
    const { streamToken, token: secret } = token.body.data.portalCreateStreamToken;
    expect(secret).toMatch(/^whst_[A-Za-z0-9_-]{43}$/);
    const stream = await gql(PORTAL_STREAM, { id: endpoint.id }, as);
    expect(stream.body.data.portalEndpointStream).toEqual({
      streamUrl: `${PUBLIC_BASE}/v1/endpoints/${endpoint.id}/stream`,
      connections: [],
      tokens: { nodes: [{ id: streamToken.id, name: 'office' }], nextCursor: null },
    });

    expect((await gql(PORTAL_REVOKE, { id: endpoint.id, token: streamToken.id }, as)).body.data).toEqual({
      portalRevokeStreamToken: true,
    });
    expect(await h.services.streamTokens.authenticate(endpoint.id, secret)).toBeNull();
    // The events list shows an event once every transaction older than its own has ended, in the whole cluster
    // (docs/events.md): another test's open transaction can hold the second one back for a moment.
    const events = await vi.waitFor(
      async () => {
        const page = await h.services.events.listEvents({ actor: h.team }, {
          resource_id: endpoint.id,
          limit: 10,
        } as Parameters<typeof h.services.events.listEvents>[1]);
        if (page.data.filter((event) => event.type === 'webhooks.portal.endpoint.updated').length < 2)
          throw new Error('both changes not listed yet');
        return page;
      },
      { timeout: 10_000, interval: 100 },
    );
    // Each change recorded with the session's ID, as a change of the endpoint's credentials (never the token).
    const recorded = events.data.filter((event) => event.type === 'webhooks.portal.endpoint.updated');
    expect(recorded.map((event) => event.data['changes'])).toEqual(['stream_tokens', 'stream_tokens']);
    for (const event of recorded) expect(event.data['session_id']).toMatch(/^wdp_/);
    expect(JSON.stringify(events.data)).not.toContain(secret);
  });

  it("reaches only its tenant's endpoints, and a read-only session reads but does not change", async () => {
    const other = await gql(CREATE_ENDPOINT, { input: { tenantId, deliveryMode: 'stream' } });
    const othersEndpoint: string = other.body.data.createEndpoint.endpoint.id;
    const portal = await portalSession('portal-streams-ro', 'read_only');
    const as = { key: portal.token };
    for (const [document, variables] of [
      [PORTAL_STREAM, { id: othersEndpoint }],
      [PORTAL_CREATE_TOKEN, { id: othersEndpoint }],
    ] as const) {
      const refused = await gql(document, variables, as);
      expect(refused.body.errors[0].extensions.code).toBe(
        document === PORTAL_STREAM ? 'not_found' : 'portal_access_denied',
      );
    }
    const own = await post(h, '/endpoints', { tenant_id: portal.tenantId, delivery_mode: 'stream' });
    const read = await gql(PORTAL_STREAM, { id: own.json.id }, as);
    expect(read.body.data.portalEndpointStream.tokens.nodes).toEqual([]);
    const write = await gql(PORTAL_CREATE_TOKEN, { id: own.json.id }, as);
    expect(write.body.errors[0].extensions.code).toBe('portal_access_denied');
  });
});
