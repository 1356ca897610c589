import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;
let endpointId: string;
beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  tenantId = (await post(h, '/tenants', { external_id: 'gql-msg', name: 'Messages' })).json.id;
  await post(h, '/event_types', { name: 'order.created' });
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/orders' })).json
    .id;
});
afterAll(async () => {
  await h.close();
});

const MESSAGE_FIELDS = `id tenantId eventType externalId origin sourceId status bodyBytes bodySha256 contentType
  deliverAt expiresAt retainedUntil contentAvailable
  deliveryCounts { scheduled queued inFlight retryWait succeeded failed expired canceled }
  price { ingestUnits deliveryUnits totalUsd rateVersion }
  redacted redactionStatus redactedAt metadata createdAt`;

const PUBLISH = `mutation($input: PublishMessageInput!, $key: String) {
  publishMessage(input: $input, idempotencyKey: $key) { ${MESSAGE_FIELDS} }
}`;
const READ = `query($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`;
const SEND_TEST = `mutation($endpointId: ID!, $payload: String, $key: String) {
  sendTestMessage(endpointId: $endpointId, payload: $payload, idempotencyKey: $key) { ${MESSAGE_FIELDS} }
}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function messageCount(): Promise<number> {
  const rows: { n: number }[] = await h.services.db.query(
    'SELECT count(*)::int AS n FROM messages WHERE team_id = $1',
    [h.team.teamId],
  );
  return rows[0]!.n;
}

describe('GraphQL messages', () => {
  it('publishes a message with its exact bytes and reads it back with every field', async () => {
    const payload = '{ "order" : 42, "total": 1.50e2 }';
    const published = await gql(PUBLISH, {
      input: { tenantId, eventType: 'order.created', payload, externalId: 'order-42', metadata: { source: 'shop' } },
    });
    expect(published.body.errors).toBeUndefined();
    const message = published.body.data.publishMessage;
    const minified = '{"order":42,"total":1.50e2}';
    expect(message).toEqual({
      id: expect.stringMatching(/^wdm_/),
      tenantId,
      eventType: 'order.created',
      externalId: 'order-42',
      origin: 'api',
      sourceId: null,
      status: 'queued',
      bodyBytes: minified.length,
      bodySha256: sha256(minified),
      contentType: 'application/json',
      deliverAt: '2026-11-02T10:00:00.000Z',
      expiresAt: '2026-11-05T10:00:00.000Z',
      retainedUntil: '2026-12-02T10:00:00.000Z',
      contentAvailable: true,
      deliveryCounts: {
        scheduled: 0,
        queued: 1,
        inFlight: 0,
        retryWait: 0,
        succeeded: 0,
        failed: 0,
        expired: 0,
        canceled: 0,
      },
      price: { ingestUnits: 1, deliveryUnits: 1, totalUsd: '0.00006', rateVersion: '2026-10-08' },
      redacted: false,
      redactionStatus: null,
      redactedAt: null,
      metadata: { source: 'shop' },
      createdAt: '2026-11-02T10:00:00.000Z',
    });
    const read = await gql(READ, { id: message.id });
    expect(read.body.data.message).toEqual(message);
    // The same message as REST shows it.
    const rest = await h.request('GET', `/messages/${message.id}`);
    expect(rest.json).toMatchObject({ id: message.id, status: 'queued', body_sha256: message.bodySha256 });
  });

  it('a message to no endpoint is accepted as no_destinations; endpointIds pick the endpoints', async () => {
    const lonely = (await post(h, '/tenants', { external_id: 'gql-lonely', name: 'Lonely' })).json.id;
    const none = await gql(PUBLISH, { input: { tenantId: lonely, eventType: 'order.created', payload: 'null' } });
    expect(none.body.data.publishMessage).toMatchObject({ status: 'no_destinations', bodyBytes: 4 });
    const picked = await gql(PUBLISH, {
      input: { tenantId, eventType: 'order.created', payload: '{}', endpointIds: [endpointId] },
    });
    expect(picked.body.data.publishMessage.deliveryCounts.queued).toBe(1);
  });

  it('an idempotent replay answers the first message and stores nothing new; another input conflicts', async () => {
    const key = uniqueKey();
    const input = { tenantId, eventType: 'order.created', payload: '{"n": 1}' };
    const first = await gql(PUBLISH, { input, key });
    const before = await messageCount();
    const again = await gql(PUBLISH, { input: { ...input, payload: '{ "n" : 1 }' }, key });
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data.publishMessage).toEqual(first.body.data.publishMessage);
    expect(await messageCount()).toBe(before);
    const other = await gql(PUBLISH, { input: { ...input, payload: '{"n": 2}' }, key });
    expect(other.body.errors[0].extensions.code).toBe('idempotency_conflict');
    expect(await messageCount()).toBe(before);
  });

  it('answers errors with the REST codes in extensions.code, naming the field', async () => {
    const unknownType = await gql(PUBLISH, { input: { tenantId, eventType: 'order.never', payload: '{}' } });
    expect(unknownType.body.errors[0].extensions).toEqual({ code: 'invalid_event_type', field: 'event_type' });
    const badJson = await gql(PUBLISH, { input: { tenantId, eventType: 'order.created', payload: '{"a":1,"a":2}' } });
    expect(badJson.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'payload' });
    const noTenant = await gql(PUBLISH, {
      input: { tenantId: 'wdt_missing', eventType: 'order.created', payload: '1' },
    });
    expect(noTenant.body.errors[0].extensions).toEqual({ code: 'invalid_field', field: 'tenant_id' });
    const missing = await gql(READ, { id: 'wdm_missing' });
    expect(missing.body.errors[0].extensions.code).toBe('not_found');
    const intruder = await h.newTeam('intruder');
    const published = await gql(PUBLISH, { input: { tenantId, eventType: 'order.created', payload: '1' } });
    const foreign = await gql(READ, { id: published.body.data.publishMessage.id }, { key: intruder.key });
    expect(foreign.body.errors[0].extensions.code).toBe('not_found');
    const anonymous = await gql(READ, { id: published.body.data.publishMessage.id }, { key: null });
    expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
  });

  it('sendTestMessage sends svc.test with {"test":true} by default; a paused endpoint gives invalid_state', async () => {
    const sent = await gql(SEND_TEST, { endpointId, key: uniqueKey() });
    expect(sent.body.errors).toBeUndefined();
    expect(sent.body.data.sendTestMessage).toMatchObject({
      eventType: 'svc.test',
      origin: 'test',
      tenantId,
      bodySha256: sha256('{"test":true}'),
      deliveryCounts: { queued: 1 },
      price: { ingestUnits: 1, deliveryUnits: 1 },
    });
    const custom = await gql(SEND_TEST, { endpointId, payload: '[1, 2]' });
    expect(custom.body.data.sendTestMessage.bodySha256).toBe(sha256('[1,2]'));

    const current = await h.request('GET', `/endpoints/${endpointId}`);
    await h.request('PATCH', `/endpoints/${endpointId}`, {
      ifMatch: current.headers.get('etag')!,
      body: { status: 'paused' },
    });
    const before = await messageCount();
    const refused = await gql(SEND_TEST, { endpointId });
    expect(refused.body.errors[0].extensions.code).toBe('invalid_state');
    expect(await messageCount()).toBe(before);
    const missing = await gql(SEND_TEST, { endpointId: 'wde_missing' });
    expect(missing.body.errors[0].extensions.code).toBe('not_found');
  });

  it('publishing spends the admission bucket (burst 200), not the config-write one (burst 40)', async () => {
    const team = await h.newTeam('gql-admission');
    const key = { key: team.key };
    const tenant = (await post(h, '/tenants', { external_id: 'adm', name: 'Adm' }, key)).json.id;
    await post(h, '/event_types', { name: 'order.created' }, key);
    // The harness clock stands still: no bucket refills during the loop.
    for (let i = 0; i < 45; i += 1) {
      const r = await gql(PUBLISH, { input: { tenantId: tenant, eventType: 'order.created', payload: `${i}` } }, key);
      expect(r.body.errors).toBeUndefined();
    }
    const write = await gql('mutation { createTenant(input: {externalId: "after", name: "After"}) { id } }', {}, key);
    expect(write.body.errors).toBeUndefined();
  });
});
