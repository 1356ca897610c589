import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR, MINUTE, SECOND } from '@svc/core';
import { post, startHarness, type ApiResponse, type Harness, type TestTeam } from '../testing/harness.js';

/**
 * GET /analytics through REST: every 422, buckets (empty ones present, hour and day alignment, partial first and
 * last buckets), filter precedence, counting by transition time once the rollup has run, and the queue gauges.
 * The delivery engine does not run here: deliveries stay queued (the property test in apps/worker covers attempts
 * and outcomes).
 */
const PUBLIC_BASE = 'https://hooks.svc.test';
let h: Harness;
let other: TestTeam;
const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness({ publicBaseUrl: PUBLIC_BASE });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  await post(h, '/event_types', { name: 'order.created' });
  for (const name of ['a', 'b']) {
    const tenant = await post(h, '/tenants', { external_id: `analytics-${name}`, name });
    ids[`tenant_${name}`] = tenant.json.id;
  }
  for (const [name, tenant] of [
    ['a1', 'tenant_a'],
    ['a2', 'tenant_a'],
    ['b1', 'tenant_b'],
  ] as const) {
    const endpoint = await post(h, '/endpoints', { tenant_id: ids[tenant], url: `https://example.com/${name}` });
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

  other = await h.newTeam('other');
  const theirTenant = await post(h, '/tenants', { external_id: 'theirs', name: 'Theirs' }, { key: other.key });
  await post(h, '/event_types', { name: 'order.created' }, { key: other.key });
  ids['their_tenant'] = theirTenant.json.id;
  ids['their_endpoint'] = (
    await post(h, '/endpoints', { tenant_id: theirTenant.json.id, url: 'https://example.com/x' }, { key: other.key })
  ).json.id;
  ids['their_source'] = (
    await post(
      h,
      '/sources',
      { tenant_id: theirTenant.json.id, name: 'x', verification: { kind: 'bearer' }, event_type: 'order.created' },
      { key: other.key },
    )
  ).json.id;
});
afterAll(async () => {
  await h.close();
});

function analytics(params: Record<string, string>, key?: string): Promise<ApiResponse> {
  return h.request('GET', `/analytics?${new URLSearchParams(params).toString()}`, key ? { key } : {});
}

/** The harness clock starts at 2026-11-02T10:00:00Z. */
const DAY_START = '2026-11-02T00:00:00Z';
const DAY_END = '2026-11-03T00:00:00Z';

describe('GET /analytics refuses with 422 invalid_field naming the parameter', () => {
  const window = { created_after: '2026-11-01T00:00:00Z', created_before: '2026-11-02T00:00:00Z' };
  const cases: [string, () => Record<string, string>, string][] = [
    ['no times', () => ({}), 'created_after'],
    ['no created_before', () => ({ created_after: window.created_after }), 'created_before'],
    ['no created_after', () => ({ created_before: window.created_before }), 'created_after'],
    ['a time that is not RFC 3339', () => ({ ...window, created_after: 'yesterday' }), 'created_after'],
    ['a date without a time', () => ({ ...window, created_before: '2026-11-02' }), 'created_before'],
    ['a time without an offset', () => ({ ...window, created_before: '2026-11-02T00:00:00' }), 'created_before'],
    ['an empty window', () => ({ ...window, created_before: window.created_after }), 'created_after'],
    ['a window backwards', () => ({ created_after: DAY_END, created_before: DAY_START }), 'created_after'],
    [
      'a window over 30 days',
      () => ({ created_after: '2026-10-03T00:00:00Z', created_before: '2026-11-02T00:00:00.001Z' }),
      'created_after',
    ],
    ['a bad bucket', () => ({ ...window, bucket: 'week' }), 'bucket'],
    ["another team's tenant", () => ({ ...window, tenant_id: ids['their_tenant']! }), 'tenant_id'],
    ["another team's endpoint", () => ({ ...window, endpoint_id: ids['their_endpoint']! }), 'endpoint_id'],
    ["another team's source", () => ({ ...window, source_id: ids['their_source']! }), 'source_id'],
    [
      "another team's tenant beside an endpoint of ours",
      () => ({ ...window, endpoint_id: ids['endpoint_a1']!, tenant_id: ids['their_tenant']! }),
      'tenant_id',
    ],
    ['a tenant that does not exist', () => ({ ...window, tenant_id: 'wdt_0000000000000000000000000' }), 'tenant_id'],
    ['a malformed ID', () => ({ ...window, endpoint_id: 'not an id' }), 'endpoint_id'],
    ['an unknown parameter', () => ({ ...window, scope: 'team' }), 'scope'],
  ];
  it.each(cases)('%s', async (_name, params, field) => {
    const response = await analytics(params());
    expect(response.status, response.text).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field });
  });

  it('accepts a window of exactly 30 days, and each ID of its own team', async () => {
    const month = await analytics({ created_after: '2026-10-03T00:00:00Z', created_before: '2026-11-02T00:00:00Z' });
    expect(month.status, month.text).toBe(200);
    expect(month.json.data).toHaveLength(720);
    const theirs = await analytics(
      { created_after: DAY_START, created_before: DAY_END, tenant_id: ids['their_tenant']! },
      other.key,
    );
    expect(theirs.status, theirs.text).toBe(200);
  });
});

describe('GET /analytics buckets', () => {
  it('has every bucket overlapping the window, whole and UTC aligned, zeros where nothing happened', async () => {
    const hours = await analytics({
      created_after: '2026-10-20T10:30:00+02:00',
      created_before: '2026-10-20T12:15:00Z',
    });
    expect(hours.status, hours.text).toBe(200);
    expect(hours.json).toMatchObject({
      bucket: 'hour',
      created_after: '2026-10-20T08:30:00.000Z',
      created_before: '2026-10-20T12:15:00.000Z',
      queue_depth: 0,
      oldest_due_age_seconds: 0,
    });
    expect(hours.json.data.map((row: { start: string }) => row.start)).toEqual([
      '2026-10-20T08:00:00.000Z',
      '2026-10-20T09:00:00.000Z',
      '2026-10-20T10:00:00.000Z',
      '2026-10-20T11:00:00.000Z',
      '2026-10-20T12:00:00.000Z',
    ]);
    expect(hours.json.data[0]).toEqual({
      start: '2026-10-20T08:00:00.000Z',
      admitted_messages: 0,
      ingest_bytes: 0,
      deliveries: 0,
      attempts: 0,
      succeeded: 0,
      failed: 0,
      expired: 0,
      canceled: 0,
      duplicates: 0,
      rejected_auth: 0,
      throttled: 0,
      queue_depth: 0,
      oldest_due_age_seconds: 0,
    });

    const days = await analytics({
      created_after: '2026-10-03T05:00:00Z',
      created_before: '2026-11-02T05:00:00Z',
      bucket: 'day',
    });
    expect(days.status, days.text).toBe(200);
    expect(days.json.data).toHaveLength(31);
    expect(days.json.data[0].start).toBe('2026-10-03T00:00:00.000Z');
    expect(days.json.data[30].start).toBe('2026-11-02T00:00:00.000Z');
    const aligned = await analytics({ created_after: DAY_START, created_before: DAY_END, bucket: 'day' });
    expect(aligned.json.data.map((row: { start: string }) => row.start)).toEqual(['2026-11-02T00:00:00.000Z']);
  });
});

describe('GET /analytics counts', () => {
  const at = (iso: string) => h.clock.set(new Date(iso));
  const publish = async (body: Record<string, unknown>) => {
    const response = await post(h, '/messages', { event_type: 'order.created', ...body });
    expect(response.status, response.text).toBe(202);
  };
  const capture = (secret: string, payload: string) =>
    h.request('POST', `/receive/${ids['source_token']}`, {
      key: null,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: payload,
      raw: true,
    });
  const hourRows = async (params: Record<string, string> = {}) => {
    const response = await analytics({ created_after: DAY_START, created_before: DAY_END, ...params });
    expect(response.status, response.text).toBe(200);
    return response.json as {
      data: Record<string, number | string>[];
      queue_depth: number;
      oldest_due_age_seconds: number;
    };
  };
  const hourOf = (rows: Record<string, number | string>[], hour: number) => rows[hour]!;

  it('counts admissions, deliveries and captures in the hour they happened, per scope, once rolled up', async () => {
    at('2026-11-02T10:05:00Z');
    await publish({ tenant_id: ids['tenant_a'], payload: { n: 1 } });
    at('2026-11-02T11:20:00Z');
    await publish({ tenant_id: ids['tenant_b'], payload: { n: 22 } });
    at('2026-11-02T11:40:00Z');
    await publish({ tenant_id: ids['tenant_a'], endpoint_ids: [ids['endpoint_a1']], payload: { n: 333 } });
    const captured = await capture(ids['source_secret']!, '{"id":"cap_1"}');
    expect(captured.status, captured.text).toBe(200);
    const duplicate = await capture(ids['source_secret']!, '{"id":"cap_1"}');
    expect(duplicate.status, duplicate.text).toBe(200);
    const refused = await capture('not-the-secret', '{"id":"cap_2"}');
    expect(refused.status, refused.text).toBe(401);

    // Eventually consistent: nothing shows before the rollup has run.
    expect(hourOf((await hourRows()).data, 10).admitted_messages).toBe(0);
    h.clock.advance(2 * MINUTE);
    await h.services.analytics.rollUp();

    const team = await hourRows();
    expect(team.data).toHaveLength(24);
    expect(hourOf(team.data, 10)).toMatchObject({ admitted_messages: 1, ingest_bytes: 7, deliveries: 2 });
    expect(hourOf(team.data, 11)).toMatchObject({
      admitted_messages: 3,
      ingest_bytes: 8 + 9 + 14,
      deliveries: 1 + 1 + 2,
      duplicates: 1,
      rejected_auth: 1,
      attempts: 0,
    });
    for (const hour of [0, 9, 12, 23]) expect(hourOf(team.data, hour).admitted_messages).toBe(0);

    const tenantA = await hourRows({ tenant_id: ids['tenant_a']! });
    expect(hourOf(tenantA.data, 10)).toMatchObject({ admitted_messages: 1, deliveries: 2 });
    expect(hourOf(tenantA.data, 11)).toMatchObject({ admitted_messages: 2, deliveries: 3, duplicates: 1 });
    const tenantB = await hourRows({ tenant_id: ids['tenant_b']! });
    expect(hourOf(tenantB.data, 11)).toMatchObject({ admitted_messages: 1, ingest_bytes: 8, deliveries: 1 });

    // An endpoint counts the messages that fanned out to it, and one delivery each.
    const a1 = await hourRows({ endpoint_id: ids['endpoint_a1']! });
    expect(hourOf(a1.data, 10)).toMatchObject({ admitted_messages: 1, ingest_bytes: 7, deliveries: 1 });
    expect(hourOf(a1.data, 11)).toMatchObject({ admitted_messages: 2, ingest_bytes: 9 + 14, deliveries: 2 });
    const a2 = await hourRows({ endpoint_id: ids['endpoint_a2']! });
    expect(hourOf(a2.data, 11)).toMatchObject({ admitted_messages: 1, ingest_bytes: 14, deliveries: 1 });

    const source = await hourRows({ source_id: ids['source']! });
    expect(hourOf(source.data, 11)).toMatchObject({
      admitted_messages: 1,
      ingest_bytes: 14,
      deliveries: 2,
      duplicates: 1,
      rejected_auth: 1,
    });
    expect(hourOf(source.data, 10).admitted_messages).toBe(0);

    // The most specific filter wins: endpoint, then source, then tenant.
    expect((await hourRows({ tenant_id: ids['tenant_b']!, endpoint_id: ids['endpoint_a1']! })).data).toEqual(a1.data);
    expect(
      (await hourRows({ tenant_id: ids['tenant_b']!, source_id: ids['source']!, endpoint_id: ids['endpoint_a2']! }))
        .data,
    ).toEqual(a2.data);
    expect((await hourRows({ tenant_id: ids['tenant_b']!, source_id: ids['source']! })).data).toEqual(source.data);

    // A day is the sum of its hours.
    const day = await analytics({ created_after: DAY_START, created_before: DAY_END, bucket: 'day' });
    expect(day.json.data).toHaveLength(1);
    expect(day.json.data[0]).toMatchObject({ admitted_messages: 4, deliveries: 6, duplicates: 1, rejected_auth: 1 });
  });

  it('samples the queue gauges into the current hour and answers the latest sample as current', async () => {
    // Nothing delivers here: the 6 deliveries above wait, due since 10:05 (the oldest) and 11:40.
    at('2026-11-02T12:30:00Z');
    await h.services.analytics.rollUp();
    const team = await hourRows();
    const oldest = (Date.parse('2026-11-02T12:30:00Z') - Date.parse('2026-11-02T10:05:00Z')) / SECOND;
    expect(team).toMatchObject({ queue_depth: 6, oldest_due_age_seconds: oldest });
    expect(hourOf(team.data, 12)).toMatchObject({ queue_depth: 6, oldest_due_age_seconds: oldest });
    // The rollup at 11:42 sampled hour 11; none ran in hour 10, whose gauges stay 0 (a gauge is never made up).
    expect(hourOf(team.data, 11)).toMatchObject({ queue_depth: 6, oldest_due_age_seconds: 97 * 60 });
    expect(hourOf(team.data, 10)).toMatchObject({ queue_depth: 0, oldest_due_age_seconds: 0 });

    const tenantB = await hourRows({ tenant_id: ids['tenant_b']! });
    const sinceB = (Date.parse('2026-11-02T12:30:00Z') - Date.parse('2026-11-02T11:20:00Z')) / SECOND;
    expect(tenantB).toMatchObject({ queue_depth: 1, oldest_due_age_seconds: sinceB });
    const source = await hourRows({ source_id: ids['source']! });
    expect(source).toMatchObject({ queue_depth: 2 });
    const a1 = await hourRows({ endpoint_id: ids['endpoint_a1']! });
    expect(a1.queue_depth).toBe(3);

    // Canceled deliveries leave the queue; the next sample says so, in its own hour.
    const [message] = await h.services.db.query(
      `SELECT id FROM messages WHERE tenant_id = $1 ORDER BY created_at LIMIT 1`,
      [ids['tenant_b']],
    );
    at('2026-11-02T13:10:00Z');
    expect((await post(h, `/messages/${message.id}/cancel`, {})).status).toBe(200);
    await h.services.analytics.rollUp();
    const after = await hourRows({ tenant_id: ids['tenant_b']! });
    expect(after).toMatchObject({ queue_depth: 0, oldest_due_age_seconds: 0 });
    expect(hourOf(after.data, 13)).toMatchObject({ queue_depth: 0, canceled: 1 });
    expect(hourOf(after.data, 12)).toMatchObject({ queue_depth: 1 });

    // A day's gauges are those of its last sample.
    const day = await analytics({ created_after: DAY_START, created_before: DAY_END, bucket: 'day' });
    expect(day.json.data[0]).toMatchObject({ queue_depth: 5, canceled: 1 });
    h.clock.advance(HOUR);
  });
});
