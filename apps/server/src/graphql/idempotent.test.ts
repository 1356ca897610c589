import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, uniqueKey, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;
beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  const tenant = await gql('mutation { createTenant(input: { externalId: "idem", name: "Idem" }) { id } }');
  tenantId = tenant.body.data.createTenant.id;
});
afterAll(async () => {
  await h.close();
});

const CREATE_ENDPOINT = `mutation($input: CreateEndpointInput!, $key: String) {
  createEndpoint(input: $input, idempotencyKey: $key) { endpoint { id url secretVersion createdAt } signingSecret }
}`;

async function endpointCount(): Promise<number> {
  const list = await gql('query($t: ID) { endpoints(tenantId: $t, first: 100) { nodes { id } } }', { t: tenantId });
  return list.body.data.endpoints.nodes.length;
}

describe('GraphQL idempotency keys', () => {
  it('a resubmitted createEndpoint creates one endpoint and answers the same endpoint and secret', async () => {
    const key = uniqueKey();
    const input = {
      tenantId,
      url: 'https://hooks.example.com/once',
      filter: '{"path": "/amount", "op": "gte", "value": 1000}',
    };
    const before = await endpointCount();
    const first = await gql(CREATE_ENDPOINT, { input, key });
    expect(first.body.errors).toBeUndefined();
    const created = first.body.data.createEndpoint;
    expect(created.signingSecret).toMatch(/^whsec_/);

    // The same request again (the client timed out and retried), with the filter written differently.
    const again = await gql(CREATE_ENDPOINT, {
      input: { ...input, filter: '{ "path" : "/amount", "op": "gte", "value": 1000 }' },
      key,
    });
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data.createEndpoint).toEqual(created);
    expect(await endpointCount()).toBe(before + 1);

    // Another key of the same team sees the endpoint but not the secret.
    const otherKey = await h.services.teams.createKey(h.team.teamId);
    const byOtherKey = await gql(CREATE_ENDPOINT, { input, key }, { key: otherKey.secret });
    expect(byOtherKey.body.data.createEndpoint).toEqual({ endpoint: created.endpoint, signingSecret: null });

    // Once the secret is rotated, a replay no longer shows the old one.
    const { etag } = (await gql('query($id: ID!) { endpoint(id: $id) { etag } }', { id: created.endpoint.id })).body
      .data.endpoint;
    const rotated = await gql(
      'mutation($id: ID!, $etag: String!) { rotateEndpointSecret(id: $id, etag: $etag) { signingSecret } }',
      {
        id: created.endpoint.id,
        etag,
      },
    );
    expect(rotated.body.data.rotateEndpointSecret.signingSecret).not.toBe(created.signingSecret);
    const afterRotation = await gql(CREATE_ENDPOINT, { input, key });
    expect(afterRotation.body.data.createEndpoint).toEqual({ endpoint: created.endpoint, signingSecret: null });
  });

  it('concurrent twins with one key create one endpoint; the others wait their turn or replay it', async () => {
    const key = uniqueKey();
    const input = { tenantId, url: 'https://hooks.example.com/twins' };
    const before = await endpointCount();
    const answers = await Promise.all(Array.from({ length: 5 }, () => gql(CREATE_ENDPOINT, { input, key })));
    const ids = new Set(answers.flatMap((a) => (a.body.data ? [a.body.data.createEndpoint.endpoint.id] : [])));
    expect(ids.size).toBe(1);
    for (const answer of answers)
      if (answer.body.errors) expect(answer.body.errors[0].extensions.code).toBe('request_in_progress');
    expect(await endpointCount()).toBe(before + 1);
  });

  it('the same key with a different input answers idempotency_conflict and creates nothing', async () => {
    const key = uniqueKey();
    const first = await gql(CREATE_ENDPOINT, { input: { tenantId, url: 'https://hooks.example.com/a' }, key });
    expect(first.body.errors).toBeUndefined();
    const before = await endpointCount();
    const other = await gql(CREATE_ENDPOINT, { input: { tenantId, url: 'https://hooks.example.com/b' }, key });
    expect(other.body.errors).toEqual([
      expect.objectContaining({ path: ['createEndpoint'], extensions: { code: 'idempotency_conflict' } }),
    ]);
    expect(await endpointCount()).toBe(before);
  });

  it('a failed mutation does not use up its key; a corrected retry runs', async () => {
    const key = uniqueKey();
    const bad = await gql(CREATE_ENDPOINT, {
      input: { tenantId, url: 'https://hooks.example.com/x', timeoutSeconds: 99 },
      key,
    });
    expect(bad.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'timeout_seconds' });
    const good = await gql(CREATE_ENDPOINT, { input: { tenantId, url: 'https://hooks.example.com/x' }, key });
    expect(good.body.data.createEndpoint.signingSecret).toMatch(/^whsec_/);
  });

  it('createTenant, createEventType and rotateEndpointSecret replay their first answer', async () => {
    const tenantKey = uniqueKey();
    const createTenant =
      'mutation($k: String) { createTenant(input: { externalId: "idem-2", name: "Two" }, idempotencyKey: $k) { id version etag createdAt } }';
    const tenant = await gql(createTenant, { k: tenantKey });
    expect((await gql(createTenant, { k: tenantKey })).body.data).toEqual(tenant.body.data);

    const eventTypeKey = uniqueKey();
    const createEventType =
      'mutation($k: String) { createEventType(input: { name: "idem.done", example: "{\\"n\\": 1.50}" }, idempotencyKey: $k) { id example } }';
    const eventType = await gql(createEventType, { k: eventTypeKey });
    expect(eventType.body.data.createEventType.example).toBe('{"n": 1.50}');
    expect((await gql(createEventType, { k: eventTypeKey })).body.data).toEqual(eventType.body.data);

    const endpoint = (await gql(CREATE_ENDPOINT, { input: { tenantId, url: 'https://hooks.example.com/r' } })).body.data
      .createEndpoint.endpoint;
    const { etag } = (await gql('query($id: ID!) { endpoint(id: $id) { etag } }', { id: endpoint.id })).body.data
      .endpoint;
    const rotate = `mutation($id: ID!, $etag: String!, $k: String) {
      rotateEndpointSecret(id: $id, etag: $etag, overlapSeconds: 60, idempotencyKey: $k) { endpoint { secretVersion } signingSecret }
    }`;
    const rotateKey = uniqueKey();
    const rotated = await gql(rotate, { id: endpoint.id, etag, k: rotateKey });
    expect(rotated.body.data.rotateEndpointSecret.endpoint.secretVersion).toBe(endpoint.secretVersion + 1);
    // The retry carries the ETag it had; it is answered from the record, not rotated a second time.
    const replayed = await gql(rotate, { id: endpoint.id, etag, k: rotateKey });
    expect(replayed.body.data).toEqual(rotated.body.data);
  });

  it('checks the key: 1 to 128 printable ASCII characters', async () => {
    const answer = await gql(CREATE_ENDPOINT, { input: { tenantId, url: 'https://hooks.example.com/k' }, key: '' });
    expect(answer.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'idempotencyKey' });
  });

  it('a key used on REST is not replayed as a GraphQL answer (or the other way round)', async () => {
    const key = uniqueKey();
    const rest = await h.request('POST', '/tenants', {
      idempotencyKey: key,
      body: { external_id: 'idem-3', name: 'Three' },
    });
    expect(rest.status).toBe(201);
    const graphql = await gql(
      'mutation($k: String) { createTenant(input: { externalId: "idem-3", name: "Three" }, idempotencyKey: $k) { id } }',
      { k: key },
    );
    expect(graphql.body.errors[0].extensions.code).toBe('idempotency_conflict');
  });
});
