import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, uniqueKey, type Harness } from '../testing/harness.js';
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

  it("reaches only the team's own endpoints", async () => {
    const created = await gql(CREATE_ENDPOINT, { input: { tenantId, deliveryMode: 'stream' } });
    const endpointId: string = created.body.data.createEndpoint.endpoint.id;
    const other = await h.newTeam('other');
    const foreign = await gql(CREATE_TOKEN, { endpointId, name: 'x' }, { key: other.key });
    expect(foreign.body.errors[0].extensions.code).toBe('not_found');
  });
});
