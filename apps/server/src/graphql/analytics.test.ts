import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

/**
 * The analytics query over the real server: the REST answer's buckets, every counter and the queue gauges in
 * GraphQL names. Attempts are made with the engine's claim and settle (no worker) and the rollup runs when the test
 * calls it, so each count is exact.
 */
const PUBLIC_BASE = 'https://hooks.svc.test';
let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness({ publicBaseUrl: PUBLIC_BASE });
  gql = graphqlClient(h);
  await post(h, '/event_types', { name: 'order.created' });
  for (const name of ['a', 'b']) {
    ids[`tenant_${name}`] = (await post(h, '/tenants', { external_id: `gql-analytics-${name}`, name })).json.id;
    const endpoint = await post(h, '/endpoints', {
      tenant_id: ids[`tenant_${name}`],
      url: `https://receiver.example.com/${name}`,
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    ids[`endpoint_${name}`] = endpoint.json.id;
  }
  const source = await post(h, '/sources', {
    tenant_id: ids['tenant_a'],
    name: 'bearer',
    verification: { kind: 'bearer' },
    event_type: 'order.created',
  });
  expect(source.status, source.text).toBe(201);
  ids['source'] = source.json.id;
  ids['source_token'] = (source.json.receive_url as string).slice(`${PUBLIC_BASE}/v1/receive/`.length);
  ids['source_secret'] = source.json.secret;
});
afterAll(async () => {
  await h.close();
});

const ANALYTICS = `query($createdAfter: DateTimeISO!, $createdBefore: DateTimeISO!, $bucket: AnalyticsBucket, $tenantId: ID,
  $endpointId: ID, $sourceId: ID) {
  analytics(createdAfter: $createdAfter, createdBefore: $createdBefore, bucket: $bucket, tenantId: $tenantId,
    endpointId: $endpointId, sourceId: $sourceId) {
    bucket createdAfter createdBefore queueDepth oldestDueAgeSeconds
    rows { start admittedMessages ingestBytes deliveries attempts succeeded failed expired canceled duplicates
      rejectedAuth throttled queueDepth oldestDueAgeSeconds }
  }
}`;
/** Two hours of the day the harness clock starts in (2026-11-02T10:00:00Z). */
const WINDOW = { createdAfter: '2026-11-02T10:00:00.000Z', createdBefore: '2026-11-02T12:00:00.000Z' };
const ZEROS = {
  admittedMessages: 0,
  ingestBytes: 0,
  deliveries: 0,
  attempts: 0,
  succeeded: 0,
  failed: 0,
  expired: 0,
  canceled: 0,
  duplicates: 0,
  rejectedAuth: 0,
  throttled: 0,
  queueDepth: 0,
  oldestDueAgeSeconds: 0,
};

const answer = (status: number): AttemptResult => ({ kind: 'response', status, retryAfterSeconds: null });

async function attempt(deliveryId: string, result: AttemptResult): Promise<void> {
  const [claimed] = await new EngineSteps(h.services).claim([deliveryId]);
  expect(claimed?.deliveryId).toBe(deliveryId);
  await new EngineSteps(h.services).settle([
    { attempt: claimed!, result, durationMs: 9, responseBody: null, jitter: 0 },
  ]);
}

async function publish(tenant: string, body: Record<string, unknown> = {}): Promise<{ id: string; delivery: string }> {
  const message = await post(h, '/messages', {
    tenant_id: ids[tenant],
    event_type: 'order.created',
    payload: {},
    ...body,
  });
  expect(message.status, message.text).toBe(202);
  const [row]: { id: string }[] = await h.services.db.query('SELECT id FROM deliveries WHERE message_id = $1', [
    message.json.id,
  ]);
  return { id: message.json.id as string, delivery: row!.id };
}

function capture(secret: string, body: string) {
  return h.request('POST', `/receive/${ids['source_token']}`, {
    key: null,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body,
    raw: true,
  });
}

describe('GraphQL analytics', () => {
  it('refuses what GET /analytics refuses, with invalid_field naming the parameter', async () => {
    const other = await h.newTeam('gql-analytics-other');
    const theirTenant = (await post(h, '/tenants', { external_id: 'theirs', name: 'Theirs' }, { key: other.key })).json
      .id;
    const cases: [Record<string, unknown>, string][] = [
      [{ ...WINDOW, createdBefore: WINDOW.createdAfter }, 'created_after'],
      [{ createdAfter: '2026-10-01T00:00:00.000Z', createdBefore: '2026-11-02T00:00:00.000Z' }, 'created_after'],
      [{ ...WINDOW, tenantId: theirTenant }, 'tenant_id'],
      [{ ...WINDOW, endpointId: 'wde_0000000000000000000000000' }, 'endpoint_id'],
      [{ ...WINDOW, sourceId: 'not an id' }, 'source_id'],
    ];
    for (const [variables, field] of cases) {
      const refused = await gql(ANALYTICS, variables);
      expect(refused.body.errors[0].extensions, JSON.stringify(variables)).toEqual({ code: 'invalid_field', field });
      expect(refused.body.data).toBeNull();
    }
    // The bucket is an enum of the schema: GraphQL refuses another value before the resolver runs.
    const week = await gql(ANALYTICS, { ...WINDOW, bucket: 'week' });
    expect(week.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(week.body.errors[0].message).toContain('AnalyticsBucket');
    // Both times are required by the schema itself.
    const noWindow = await gql('{ analytics(createdAfter: "2026-11-02T10:00:00Z") { bucket } }');
    expect(noWindow.status).toBe(400);
    expect(noWindow.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('answers every counter and the queue gauges per bucket and scope once the rollup has run', async () => {
    h.clock.set(new Date('2026-11-02T10:05:00.000Z'));
    const sent = [];
    for (let i = 0; i < 4; i += 1) sent.push(await publish('tenant_a'));
    const later = [];
    for (let i = 0; i < 3; i += 1) later.push(await publish('tenant_a', { deliver_at: '2026-11-03T10:00:00.000Z' }));
    await publish('tenant_b');
    for (let i = 0; i < 3; i += 1) expect((await capture(ids['source_secret']!, '{"id":"cap_1"}')).status).toBe(200);
    expect((await capture('not-the-secret', '{"id":"cap_2"}')).status).toBe(401);

    h.clock.set(new Date('2026-11-02T10:10:00.000Z'));
    await attempt(sent[0]!.delivery, answer(200));
    await attempt(sent[1]!.delivery, answer(400));
    await attempt(sent[2]!.delivery, answer(400));
    await attempt(sent[3]!.delivery, answer(503));
    for (const message of later) expect((await post(h, `/messages/${message.id}/cancel`, {})).status).toBe(200);

    // Eventually consistent: nothing shows before the rollup; then hour 10 holds it all.
    const before = await gql(ANALYTICS, WINDOW);
    expect(before.body.data.analytics.rows[0]).toEqual({ start: WINDOW.createdAfter, ...ZEROS });
    h.clock.set(new Date('2026-11-02T10:15:00.000Z'));
    await h.services.analytics.rollUp();

    // Waiting: the retry of the 503 (not yet due), the capture's and tenant b's queued deliveries (due since 10:05).
    const waited = 10 * 60;
    const team = await gql(ANALYTICS, WINDOW);
    expect(team.body.errors).toBeUndefined();
    expect(team.body.data.analytics).toEqual({
      bucket: 'hour',
      ...WINDOW,
      queueDepth: 3,
      oldestDueAgeSeconds: waited,
      rows: [
        {
          start: '2026-11-02T10:00:00.000Z',
          admittedMessages: 9,
          ingestBytes: 8 * '{}'.length + '{"id":"cap_1"}'.length,
          deliveries: 9,
          attempts: 4,
          succeeded: 1,
          failed: 2,
          expired: 0,
          canceled: 3,
          duplicates: 2,
          rejectedAuth: 1,
          throttled: 0,
          queueDepth: 3,
          oldestDueAgeSeconds: waited,
        },
        { start: '2026-11-02T11:00:00.000Z', ...ZEROS },
      ],
    });

    const tenantB = (await gql(ANALYTICS, { ...WINDOW, tenantId: ids['tenant_b'] })).body.data.analytics;
    expect(tenantB).toMatchObject({ queueDepth: 1, oldestDueAgeSeconds: waited });
    expect(tenantB.rows[0]).toEqual({
      ...ZEROS,
      start: '2026-11-02T10:00:00.000Z',
      admittedMessages: 1,
      ingestBytes: 2,
      deliveries: 1,
      queueDepth: 1,
      oldestDueAgeSeconds: waited,
    });
    const source = (await gql(ANALYTICS, { ...WINDOW, sourceId: ids['source'] })).body.data.analytics;
    expect(source.rows[0]).toMatchObject({ admittedMessages: 1, ingestBytes: 14, duplicates: 2, rejectedAuth: 1 });
    // The most specific filter wins: the endpoint over the tenant.
    const endpointA = (await gql(ANALYTICS, { ...WINDOW, endpointId: ids['endpoint_a'], tenantId: ids['tenant_b'] }))
      .body.data.analytics;
    expect(endpointA.rows[0]).toMatchObject({ admittedMessages: 8, deliveries: 8, attempts: 4, canceled: 3 });

    // A day sums its hours.
    const day = await gql(ANALYTICS, { ...WINDOW, bucket: 'day' });
    expect(day.body.data.analytics).toMatchObject({ bucket: 'day', ...WINDOW });
    expect(day.body.data.analytics.rows).toEqual([
      { ...team.body.data.analytics.rows[0], start: '2026-11-02T00:00:00.000Z' },
    ]);
  });
});
