import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_COUNTERS, HOUR, MINUTE, SECOND, type AnalyticsCounter } from '@svc/core';
import { post, type ApiResponse } from '../../../server/src/testing/harness.js';
import { startDeliveryStack, type DeliveryStack } from '../delivery/delivery.testing.js';

/**
 * The analytics rollups against a recount from the raw rows. Random sequences of operations run on the real
 * server and worker with the injectable clock: publishes to endpoints that succeed, fail or fail then succeed
 * (retries, circuits, short windows that expire), captures with duplicates and bad signatures, cancels, throttled
 * admissions and captures, clock moves across hours and rollups midway. Once the engine is idle, the rollup runs
 * and every hour of every scope (the team, each tenant, endpoint and source) must equal the recount from messages,
 * deliveries and attempts plus the refusals the test made, exactly; so must the day buckets and the queue gauges.
 */
let stack: DeliveryStack;

interface Tenant {
  id: string;
  endpoints: string[];
}
interface Source {
  id: string;
  tenantId: string;
  token: string;
  secret: string;
  /** Bodies captured, with the service time they were captured (body duplicates count for 24 hours). */
  captured: { body: string; at: number }[];
}
const tenants: Tenant[] = [];
const sources: Source[] = [];
const messageIds: string[] = [];
/** The refusals the test made: they leave no raw row to recount from. */
const refusals: {
  kind: 'duplicates' | 'rejected_auth' | 'throttled';
  at: Date;
  tenantId: string | null;
  sourceId: string | null;
}[] = [];
let started: Date;
let serial = 0;

beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 20 });
  started = stack.h.clock.now();
  // ok: always 200; fail: always 500 (3 attempts 5 minutes apart, then failed); flaky: 500s and 200s in turn.
  stack.script.set('/fail-0', [500]);
  stack.script.set('/fail-2', [500]);
  stack.script.set(
    '/flaky-1',
    Array.from({ length: 400 }, (_, i) => (i % 3 === 2 ? 200 : 500)),
  );
  const layout = [['/ok-0', '/fail-0'], ['/flaky-1', '/ok-1'], ['/fail-2']];
  for (const [i, paths] of layout.entries()) {
    const tenant = await post(stack.h, '/tenants', { external_id: `analytics-${i}`, name: `T${i}` });
    const endpoints: string[] = [];
    for (const path of paths) {
      const endpoint = await post(stack.h, '/endpoints', {
        tenant_id: tenant.json.id,
        url: `${stack.base}${path}`,
        retry_delays_seconds: [300, 300],
      });
      expect(endpoint.status, endpoint.text).toBe(201);
      endpoints.push(endpoint.json.id);
    }
    tenants.push({ id: tenant.json.id, endpoints });
  }
  for (const tenant of tenants.slice(0, 2)) {
    const source = await post(stack.h, '/sources', {
      tenant_id: tenant.id,
      name: 'capture',
      verification: { kind: 'bearer' },
      event_type: 'order.created',
    });
    expect(source.status, source.text).toBe(201);
    sources.push({
      id: source.json.id,
      tenantId: tenant.id,
      token: new URL(source.json.receive_url as string).pathname.split('/').pop()!,
      secret: source.json.secret,
      captured: [],
    });
  }
}, 60_000);
afterAll(async () => {
  await stack.close();
});

type Op =
  | { kind: 'publish'; tenant: number; pad: number; onlyFirst: boolean; shortWindow: boolean }
  | { kind: 'capture'; source: number; pad: number }
  | { kind: 'duplicate'; source: number; pick: number }
  | { kind: 'bad_signature'; source: number }
  | { kind: 'throttle_admission' }
  | { kind: 'throttle_capture'; source: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'advance'; minutes: number }
  | { kind: 'idle' }
  | { kind: 'rollup' };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('publish' as const),
      tenant: fc.nat(2),
      pad: fc.nat(300),
      onlyFirst: fc.boolean(),
      shortWindow: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('capture' as const), source: fc.nat(1), pad: fc.nat(100) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), source: fc.nat(1), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('bad_signature' as const), source: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throttle_admission' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throttle_capture' as const), source: fc.nat(1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(4) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      minutes: fc.noBias(fc.integer({ min: 1, max: 90 })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('idle' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rollup' as const) }) },
);

function receive(source: Source, body: string, secret = source.secret): Promise<ApiResponse> {
  return stack.h.request('POST', `/receive/${source.token}`, {
    key: null,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body,
    raw: true,
  });
}

async function capture(source: Source, body: string): Promise<void> {
  const response = await receive(source, body);
  expect(response.status, response.text).toBe(200);
  expect(response.json.duplicate).toBe(false);
  source.captured.push({ body, at: stack.h.clock.now().getTime() });
  messageIds.push(response.json.message_id);
}

/** Sets a rate bucket empty (or full again) at the current service time. */
async function setBucket(scope: string, bucket: string, tokens: number): Promise<void> {
  await stack.h.services.db.query(
    `INSERT INTO rate_limit_buckets (team_id, bucket, tokens, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (team_id, bucket) DO UPDATE SET tokens = $3, updated_at = $4`,
    [scope, bucket, tokens, stack.h.clock.now()],
  );
  // Tokens this process already took from the bucket (rate-token leases, docs/admission.md) go too.
  stack.h.services.rateLimits.forgetLeases();
}

async function apply(op: Op): Promise<void> {
  const { h } = stack;
  const now = h.clock.now();
  switch (op.kind) {
    case 'publish': {
      const tenant = tenants[op.tenant]!;
      const response = await post(h, '/messages', {
        tenant_id: tenant.id,
        event_type: 'order.created',
        payload: { n: (serial += 1), pad: 'x'.repeat(op.pad) },
        ...(op.onlyFirst ? { endpoint_ids: [tenant.endpoints[0]] } : {}),
        ...(op.shortWindow ? { expires_at: new Date(now.getTime() + 20 * MINUTE).toISOString() } : {}),
      });
      expect(response.status, response.text).toBe(202);
      messageIds.push(response.json.id);
      return;
    }
    case 'capture':
      return capture(sources[op.source]!, JSON.stringify({ id: `cap-${(serial += 1)}`, pad: 'y'.repeat(op.pad) }));
    case 'duplicate': {
      const source = sources[op.source]!;
      // A body is a duplicate for 24 hours; older ones would be captured again.
      const recent = source.captured.filter((c) => c.at > now.getTime() - 23 * HOUR);
      if (recent.length === 0) return capture(source, JSON.stringify({ id: `cap-${(serial += 1)}` }));
      const response = await receive(source, recent[op.pick % recent.length]!.body);
      expect(response.status, response.text).toBe(200);
      expect(response.json.duplicate).toBe(true);
      refusals.push({ kind: 'duplicates', at: now, tenantId: source.tenantId, sourceId: source.id });
      return;
    }
    case 'bad_signature': {
      const source = sources[op.source]!;
      const response = await receive(source, '{"id":"forged"}', 'not-the-secret');
      expect(response.status, response.text).toBe(401);
      refusals.push({ kind: 'rejected_auth', at: now, tenantId: source.tenantId, sourceId: source.id });
      return;
    }
    case 'throttle_admission': {
      await setBucket(h.team.teamId, 'admission', 0);
      const response = await post(h, '/messages', {
        tenant_id: tenants[0]!.id,
        event_type: 'order.created',
        payload: {},
      });
      expect(response.json?.error?.code, response.text).toBe('rate_limited');
      refusals.push({ kind: 'throttled', at: now, tenantId: null, sourceId: null });
      await setBucket(h.team.teamId, 'admission', 200);
      return;
    }
    case 'throttle_capture': {
      const source = sources[op.source]!;
      await setBucket(source.id, 'source', 0);
      const response = await receive(source, '{"id":"too-fast"}');
      expect(response.json?.error?.code, response.text).toBe('rate_limited');
      refusals.push({ kind: 'throttled', at: now, tenantId: source.tenantId, sourceId: source.id });
      await setBucket(source.id, 'source', 100);
      return;
    }
    case 'cancel': {
      // One of the latest messages: those are the ones likely to have deliveries still waiting.
      const id = messageIds[messageIds.length - 1 - op.pick];
      if (!id) return;
      const response = await post(h, `/messages/${id}/cancel`, {});
      expect([200, 409], response.text).toContain(response.status);
      return;
    }
    case 'advance':
      return stack.advance(op.minutes * MINUTE);
    case 'idle':
      return untilIdle();
    case 'rollup':
      await h.services.analytics.rollUp();
      return;
  }
}

/**
 * The engine is idle when no delivery is in flight and no attempt job is running or due within a few seconds (a
 * delivery held by an open circuit waits for a probe time the frozen clock does not reach); twice in a row.
 */
async function untilIdle(): Promise<void> {
  let quiet = 0;
  await stack.until(
    'the engine to be idle',
    async () => {
      const [row] = await stack.h.services.db.query(
        `SELECT (SELECT count(*) FROM delivery_queue WHERE lease_owner IS NOT NULL)::int
              + (SELECT count(*) FROM pgboss.job WHERE name = 'delivery.attempt'
                    AND (state = 'active' OR (state IN ('created', 'retry') AND start_after < now() + interval '3 seconds')))::int
                AS busy`,
      );
      quiet = row.busy === 0 ? quiet + 1 : 0;
      if (quiet >= 3) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
      return undefined;
    },
    60_000,
  );
}

type Counts = Record<AnalyticsCounter, number>;
const hourOf = (at: Date) => Math.floor(at.getTime() / HOUR) * HOUR;

/** The recount: every counter of every scope and hour, from the raw rows and the refusals. */
async function recount(): Promise<Map<string, Counts>> {
  const { db } = stack.h.services;
  const teamId = stack.h.team.teamId;
  const expected = new Map<string, Counts>();
  const add = (scope: string, id: string | null, at: Date, counter: AnalyticsCounter, n = 1) => {
    if (id === null) return;
    const key = `${scope}:${id}:${hourOf(at)}`;
    let counts = expected.get(key);
    if (!counts) {
      counts = Object.fromEntries(ANALYTICS_COUNTERS.map((c) => [c, 0])) as Counts;
      expected.set(key, counts);
    }
    counts[counter] += n;
  };
  const everywhere = (
    d: { tenant_id: string; endpoint_id: string | null; source_id: string | null },
    at: Date,
    counter: AnalyticsCounter,
    n = 1,
  ) => {
    add('team', teamId, at, counter, n);
    add('tenant', d.tenant_id, at, counter, n);
    add('endpoint', d.endpoint_id, at, counter, n);
    add('source', d.source_id, at, counter, n);
  };
  const messages: { id: string; tenant_id: string; source_id: string | null; body_bytes: number; created_at: Date }[] =
    await db.query(`SELECT id, tenant_id, source_id, body_bytes, created_at FROM messages WHERE team_id = $1`, [
      teamId,
    ]);
  const deliveries: {
    id: string;
    message_id: string;
    tenant_id: string;
    endpoint_id: string;
    source_id: string | null;
    generation: number;
    status: string;
    created_at: Date;
    finished_at: Date | null;
  }[] = await db.query(
    `SELECT d.id, d.message_id, d.tenant_id, d.endpoint_id, m.source_id, d.generation, d.status, d.created_at,
            d.finished_at
       FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE d.team_id = $1`,
    [teamId],
  );
  const attempts: { tenant_id: string; endpoint_id: string; source_id: string | null; started_at: Date }[] =
    await db.query(
      `SELECT d.tenant_id, a.endpoint_id, m.source_id, a.started_at
         FROM attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN messages m ON m.id = d.message_id
        WHERE a.team_id = $1`,
      [teamId],
    );
  for (const m of messages) {
    everywhere({ ...m, endpoint_id: null }, m.created_at, 'admitted_messages');
    everywhere({ ...m, endpoint_id: null }, m.created_at, 'ingest_bytes', m.body_bytes);
    // An endpoint counts each message that fanned out to it.
    for (const d of deliveries.filter((x) => x.message_id === m.id && x.generation === 0)) {
      add('endpoint', d.endpoint_id, m.created_at, 'admitted_messages');
      add('endpoint', d.endpoint_id, m.created_at, 'ingest_bytes', m.body_bytes);
    }
  }
  for (const d of deliveries) {
    everywhere(d, d.created_at, 'deliveries');
    if (d.finished_at) everywhere(d, d.finished_at, d.status as AnalyticsCounter);
  }
  for (const a of attempts) everywhere(a, a.started_at, 'attempts');
  for (const r of refusals)
    everywhere({ tenant_id: r.tenantId!, endpoint_id: null, source_id: r.sourceId }, r.at, r.kind);
  return expected;
}

function scopes(): [string, string][] {
  return [
    ['team', stack.h.team.teamId],
    ...tenants.map((t) => ['tenant', t.id] as [string, string]),
    ...tenants.flatMap((t) => t.endpoints.map((e) => ['endpoint', e] as [string, string])),
    ...sources.map((s) => ['source', s.id] as [string, string]),
  ];
}

const FILTER: Record<string, string> = { tenant: 'tenant_id', endpoint: 'endpoint_id', source: 'source_id' };

async function analytics(scope: string, id: string, after: Date, before: Date, bucket: 'hour' | 'day') {
  const params = new URLSearchParams({
    created_after: after.toISOString(),
    created_before: before.toISOString(),
    bucket,
    ...(scope === 'team' ? {} : { [FILTER[scope]!]: id }),
  });
  const response = await stack.h.request('GET', `/analytics?${params.toString()}`);
  expect(response.status, response.text).toBe(200);
  return response.json as {
    data: (Counts & { start: string; queue_depth: number; oldest_due_age_seconds: number })[];
    queue_depth: number;
    oldest_due_age_seconds: number;
  };
}

type LiveQueue = { scope: string; scope_id: string; depth: number; oldest: Date | null }[];

/** Each scope's deliveries in the queue now, and the oldest due one: what the rollup's gauges sample. */
async function liveQueue(): Promise<LiveQueue> {
  const [pending]: { rows: LiveQueue }[] = await stack.h.services.db.query(
    `SELECT coalesce(json_agg(x ORDER BY x.scope, x.scope_id), '[]') AS rows FROM (
       SELECT s.scope, s.scope_id, count(*)::int AS depth,
              min(d.next_attempt_at) FILTER (WHERE d.status IN ('queued', 'retry_wait') AND d.next_attempt_at <= $2)
                AS oldest
         FROM deliveries d JOIN messages m ON m.id = d.message_id
        CROSS JOIN LATERAL (VALUES ('team', d.team_id), ('tenant', d.tenant_id), ('endpoint', d.endpoint_id),
                                   ('source', m.source_id)) AS s(scope, scope_id)
        WHERE d.team_id = $1 AND d.status IN ('queued', 'in_flight', 'retry_wait') AND s.scope_id IS NOT NULL
        GROUP BY 1, 2) x`,
    [stack.h.team.teamId, stack.h.clock.now()],
  );
  return pending!.rows;
}

/**
 * Runs the rollup until neither the raw rows nor the queue moved across it, and returns what they were. Idle leaves
 * no leased row and no due job, but the engine may still be about to claim a due row, and its expiry sweep may end
 * deliveries whose window the clock passed at any moment, even between the rollup and the recount.
 */
async function rollUpWhileStill(): Promise<{ queue: LiveQueue; counts: Map<string, Counts> }> {
  const snapshot = async () => {
    const queue = await liveQueue();
    const counts = await recount();
    return { queue, counts, text: JSON.stringify([queue, [...counts].sort()]) };
  };
  for (let attempt = 1; ; attempt += 1) {
    await untilIdle();
    const before = await snapshot();
    await stack.h.services.analytics.rollUp();
    const after = await snapshot();
    if (before.text === after.text) return after;
    if (attempt === 5) throw new Error('the raw rows moved across five rollups in a row');
  }
}

/** Each endpoint's pending counter shards, queue rows, pending deliveries by status and latest gauge, as JSON. */
async function queueDiagnosis(): Promise<string> {
  const [row]: { rows: unknown }[] = await stack.h.services.db.query(
    `SELECT json_agg(x ORDER BY x.tenant_id, x.id) AS rows FROM (
       SELECT e.id, e.tenant_id,
              (SELECT json_object_agg(c.shard, c.pending) FROM endpoint_queue_counts c WHERE c.endpoint_id = e.id)
                AS counters,
              (SELECT count(*) FROM delivery_queue q WHERE q.endpoint_id = e.id) AS queue_rows,
              (SELECT json_object_agg(s.status, s.n) FROM (
                 SELECT d.status, count(*) AS n FROM deliveries d
                  WHERE d.endpoint_id = e.id AND d.status IN ('queued', 'in_flight', 'retry_wait')
                  GROUP BY d.status) s) AS pending,
              (SELECT g.queue_depth FROM analytics_gauges g WHERE g.scope = 'endpoint' AND g.scope_id = e.id) AS gauge
         FROM endpoints e WHERE e.team_id = $1) x`,
    [stack.h.team.teamId],
  );
  return JSON.stringify(row!.rows);
}

/** Every counter of every scope and hour (the table and GET /analytics), the day buckets and the gauges. */
async function compareWithRecount(): Promise<void> {
  const { queue: pending, counts: expected } = await rollUpWhileStill();
  const zero = Object.fromEntries(ANALYTICS_COUNTERS.map((c) => [c, 0])) as Counts;

  const stored: (Counts & { scope: string; scope_id: string; hour: Date })[] = await stack.h.services.db.query(
    `SELECT scope, scope_id, hour, ${ANALYTICS_COUNTERS.map((c) => `${c}::int`).join(', ')}
       FROM analytics_hourly WHERE team_id = $1`,
    [stack.h.team.teamId],
  );
  const actual = new Map<string, Counts>();
  for (const row of stored) {
    const counts = Object.fromEntries(ANALYTICS_COUNTERS.map((c) => [c, row[c]])) as Counts;
    if (ANALYTICS_COUNTERS.some((c) => counts[c] !== 0))
      actual.set(`${row.scope}:${row.scope_id}:${row.hour.getTime()}`, counts);
  }
  expect(Object.fromEntries([...actual].sort())).toEqual(Object.fromEntries([...expected].sort()));

  // Through the API, every bucket of every scope, by hour and by day, over the whole test so far.
  const now = stack.h.clock.now();
  const after = new Date(hourOf(started));
  const before = new Date(hourOf(now) + HOUR);
  expect(before.getTime() - after.getTime()).toBeLessThanOrEqual(30 * 24 * HOUR);
  for (const [scope, id] of scopes()) {
    const hours = await analytics(scope, id, after, before, 'hour');
    for (const row of hours.data) {
      const want = expected.get(`${scope}:${id}:${Date.parse(row.start)}`) ?? zero;
      const got = Object.fromEntries(ANALYTICS_COUNTERS.map((c) => [c, row[c]]));
      expect(got, `${scope} ${id} at ${row.start}`).toEqual(want);
    }
    const days = await analytics(scope, id, after, before, 'day');
    for (const row of days.data) {
      const start = Date.parse(row.start);
      const want = { ...zero };
      for (const [key, counts] of expected) {
        const [s, sid, hour] = key.split(':');
        if (s === scope && sid === id && Number(hour) >= start && Number(hour) < start + 24 * HOUR)
          for (const c of ANALYTICS_COUNTERS) want[c] += counts[c];
      }
      expect(Object.fromEntries(ANALYTICS_COUNTERS.map((c) => [c, row[c]])), `${scope} ${id} day ${row.start}`).toEqual(
        want,
      );
    }
    // The gauges: the sample the rollup just took, now, and in the current hour's bucket.
    const live = pending.find((r) => r.scope === scope && r.scope_id === id);
    const gauges = {
      queue_depth: live?.depth ?? 0,
      oldest_due_age_seconds: live?.oldest ? Math.floor((now.getTime() - new Date(live.oldest).getTime()) / SECOND) : 0,
    };
    const sampled = { queue_depth: hours.queue_depth, oldest_due_age_seconds: hours.oldest_due_age_seconds };
    // A mismatch here was seen once in a whole run and not again (its seed replayed passed): it says what the queue's
    // counters, rows and deliveries held, endpoint by endpoint.
    const why = isDeepStrictEqual(sampled, gauges) ? '' : `: ${await queueDiagnosis()}`;
    expect(sampled, `${scope} ${id}${why}`).toEqual(gauges);
    const current = hours.data.find((row) => Date.parse(row.start) === hourOf(now))!;
    const inHour = { queue_depth: current.queue_depth, oldest_due_age_seconds: current.oldest_due_age_seconds };
    const whyHour = isDeepStrictEqual(inHour, gauges) ? '' : `: ${await queueDiagnosis()}`;
    expect(inHour, `${scope} ${id} in the current hour${whyHour}`).toEqual(gauges);
  }
}

describe('analytics rollups', () => {
  it('agree exactly with a recount from the raw rows after random operations over several hours', async () => {
    await fc.assert(
      fc.asyncProperty(fc.noBias(fc.array(opArbitrary, { minLength: 20, maxLength: 40 })), async (ops) => {
        for (const op of ops) await apply(op);
        await compareWithRecount();
      }),
      { numRuns: 4, endOnFailure: true },
    );
    // The runs covered what the rollups count: every kind of outcome and refusal happened.
    const expected = await recount();
    const team = [...expected].filter(([key]) => key.startsWith('team:'));
    const total = (c: AnalyticsCounter) => team.reduce((sum, [, counts]) => sum + counts[c], 0);
    expect(team.length).toBeGreaterThan(4);
    for (const counter of ['admitted_messages', 'deliveries', 'attempts', 'succeeded', 'failed', 'duplicates'] as const)
      expect(total(counter), counter).toBeGreaterThan(0);
  }, 300_000);
});
