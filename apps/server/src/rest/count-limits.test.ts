import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ACTIVE_SUBSCRIPTIONS, MAX_FLAGS_PER_ENVIRONMENT } from '@svc/core';
import { post, startHarness, type ApiResponse, type Harness, type TestTeam } from '../testing/harness.js';

/**
 * Every count limit holds when the last allowed request races others (docs/api-choices.md, Count limits): the
 * test brings a team to one short of the limit, fires the last allowed request and several more at once over HTTP,
 * and checks that exactly the allowed number exist afterwards and the others got the documented error. Each test
 * uses a team of its own; the limits are low so they are quick to reach.
 */
const LIMITS = {
  max_tenants: 4,
  max_event_types: 4,
  max_endpoints_per_tenant: 3,
  max_endpoints: 5,
  max_sources: 3,
  max_active_replays: 3,
  max_pending_deliveries: 6,
  max_content_bytes: 2_000,
};
/** How many requests race for the last place. */
const RACERS = 6;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ limits: LIMITS });
});
afterAll(async () => {
  await h.close();
});

async function teamWithTenant(name: string): Promise<{ team: TestTeam; tenantId: string }> {
  const team = await h.newTeam(name);
  await h.services.teams.setPaymentCard(team.teamId, true);
  const tenant = await post(h, '/tenants', { external_id: name, name }, { key: team.key });
  expect(tenant.status, tenant.text).toBe(201);
  return { team, tenantId: tenant.json.id };
}

async function count(sql: string, teamId: string): Promise<number> {
  const [row] = await h.services.db.query(sql, [teamId]);
  return Number(row.n);
}

/** Exactly `allowed` of the answers succeeded with `status`; the others are the limit's error. */
function expectExactly(
  answers: ApiResponse[],
  allowed: number,
  status: number,
  refusal: { status: number; code: string },
): void {
  const codes = answers.map((a) => (a.status === status ? 'ok' : `${a.status} ${a.json?.error?.code}`));
  expect(
    codes.filter((c) => c === 'ok'),
    codes.join(', '),
  ).toHaveLength(allowed);
  expect(
    codes.filter((c) => c !== 'ok'),
    codes.join(', '),
  ).toEqual(Array(answers.length - allowed).fill(`${refusal.status} ${refusal.code}`));
}

const quota = { status: 409, code: 'quota_exceeded' };
const race = <T>(make: (i: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: RACERS }, (_, i) => make(i)));

describe('count limits under concurrent requests', () => {
  it('max_tenants', async () => {
    const { team } = await teamWithTenant('tenants');
    for (let i = 1; i < LIMITS.max_tenants - 1; i += 1)
      expect((await post(h, '/tenants', { external_id: `t${i}`, name: 't' }, { key: team.key })).status).toBe(201);
    const answers = await race((i) => post(h, '/tenants', { external_id: `race${i}`, name: 'r' }, { key: team.key }));
    expectExactly(answers, 1, 201, quota);
    expect(await count(`SELECT count(*) AS n FROM tenants WHERE team_id = $1 AND status = 'active'`, team.teamId)).toBe(
      LIMITS.max_tenants,
    );
  });

  it('max_event_types', async () => {
    const team = await h.newTeam('event-types');
    for (let i = 1; i < LIMITS.max_event_types; i += 1)
      expect((await post(h, '/event_types', { name: `fill.e${i}` }, { key: team.key })).status).toBe(201);
    const answers = await race((i) => post(h, '/event_types', { name: `race.e${i}` }, { key: team.key }));
    expectExactly(answers, 1, 201, quota);
    expect(await count(`SELECT count(*) AS n FROM event_types WHERE team_id = $1`, team.teamId)).toBe(
      LIMITS.max_event_types,
    );
  });

  it('max_endpoints_per_tenant', async () => {
    const { team, tenantId } = await teamWithTenant('per-tenant');
    const endpoint = (i: string) =>
      post(h, '/endpoints', { tenant_id: tenantId, url: `https://receiver.example.com/${i}` }, { key: team.key });
    for (let i = 1; i < LIMITS.max_endpoints_per_tenant; i += 1) expect((await endpoint(`fill${i}`)).status).toBe(201);
    const answers = await race((i) => endpoint(`race${i}`));
    expectExactly(answers, 1, 201, quota);
    expect(
      await count(`SELECT count(*) AS n FROM endpoints WHERE tenant_id = $1 AND deleted_at IS NULL`, tenantId),
    ).toBe(LIMITS.max_endpoints_per_tenant);
  });

  it('max_endpoints (the team), racing over tenants that each have room', async () => {
    const { team, tenantId } = await teamWithTenant('per-team');
    const tenants = [tenantId];
    for (const name of ['b', 'c'])
      tenants.push((await post(h, '/tenants', { external_id: name, name }, { key: team.key })).json.id);
    const endpoint = (tenant: string, i: string) =>
      post(h, '/endpoints', { tenant_id: tenant, url: `https://receiver.example.com/${i}` }, { key: team.key });
    // 3 in the first tenant (its own limit), 1 in the second: one place left in the team.
    for (let i = 0; i < 3; i += 1) expect((await endpoint(tenants[0]!, `a${i}`)).status).toBe(201);
    expect((await endpoint(tenants[1]!, 'b0')).status).toBe(201);
    const answers = await race((i) => endpoint(tenants[1 + (i % 2)]!, `race${i}`));
    expectExactly(answers, 1, 201, quota);
    expect(
      await count(`SELECT count(*) AS n FROM endpoints WHERE team_id = $1 AND deleted_at IS NULL`, team.teamId),
    ).toBe(LIMITS.max_endpoints);
  });

  it('max_sources', async () => {
    const { team, tenantId } = await teamWithTenant('sources');
    await post(h, '/event_types', { name: 'captured.event' }, { key: team.key });
    const source = (i: number) =>
      post(
        h,
        '/sources',
        { tenant_id: tenantId, name: `s${i}`, event_type: 'captured.event', verification: { kind: 'bearer' } },
        { key: team.key },
      );
    for (let i = 1; i < LIMITS.max_sources; i += 1) expect((await source(i)).status).toBe(201);
    const answers = await race((i) => source(100 + i));
    expectExactly(answers, 1, 201, quota);
    expect(
      await count(`SELECT count(*) AS n FROM sources WHERE team_id = $1 AND deleted_at IS NULL`, team.teamId),
    ).toBe(LIMITS.max_sources);
  });

  it(`${MAX_ACTIVE_SUBSCRIPTIONS} active event subscriptions, by creating and by enabling`, async () => {
    const team = await h.newTeam('subscriptions');
    const environment = await post(h, '/platform/feature_flags/environments', { name: 'prod' }, { key: team.key });
    const subscription = (i: number) =>
      post(
        h,
        '/platform/event_subscriptions',
        {
          url: `https://receiver.example.com/s${i}`,
          events: ['feature_flags.*'],
          environment_ids: [environment.json.id],
        },
        { key: team.key },
      );
    // 17 enabled and 3 disabled: 3 places left, raced for by 3 creates and the 3 enables.
    const disabled: { id: string; etag: string }[] = [];
    for (let i = 0; i < MAX_ACTIVE_SUBSCRIPTIONS; i += 1) {
      const made = await subscription(i);
      expect(made.status, made.text).toBe(201);
      if (i >= MAX_ACTIVE_SUBSCRIPTIONS - 3) {
        const off = await h.request('PATCH', `/platform/event_subscriptions/${made.json.id}`, {
          key: team.key,
          ifMatch: made.headers.get('etag')!,
          body: { enabled: false },
        });
        expect(off.status, off.text).toBe(200);
        disabled.push({ id: made.json.id, etag: off.headers.get('etag')! });
      }
    }
    // One place left: enabled 17, so one of the 3 disabled or of the new ones may take each of the 3 places.
    const answers = await Promise.all([
      ...[100, 101, 102].map((i) => subscription(i)),
      ...disabled.map((d) =>
        h.request('PATCH', `/platform/event_subscriptions/${d.id}`, {
          key: team.key,
          ifMatch: d.etag,
          body: { enabled: true },
        }),
      ),
    ]);
    const ok = answers.filter((a) => a.status === 200 || a.status === 201);
    const refused = answers.filter((a) => a.status !== 200 && a.status !== 201);
    expect(ok, answers.map((a) => a.status).join(', ')).toHaveLength(3);
    for (const r of refused) expect(`${r.status} ${r.json.error.code}`).toBe('409 quota_exceeded');
    expect(
      await count(
        `SELECT count(*) AS n FROM event_subscriptions WHERE team_id = $1 AND deleted_at IS NULL AND enabled`,
        team.teamId,
      ),
    ).toBe(MAX_ACTIVE_SUBSCRIPTIONS);
  });

  it(`${MAX_FLAGS_PER_ENVIRONMENT} flags per environment`, async () => {
    const team = await h.newTeam('flags');
    const environment = await post(h, '/platform/feature_flags/environments', { name: 'prod' }, { key: team.key });
    // All but one place filled directly (the config-write bucket would not allow them over HTTP).
    await h.services.db.query(
      `INSERT INTO feature_flags (environment_id, key, team_id, enabled, revision, created_by, updated_by, created_at,
                                  updated_at)
       SELECT $1, 'fill_' || n, $2, false, 0, $3, $3, now(), now() FROM generate_series(1, $4::int) AS n`,
      [environment.json.id, team.teamId, team.keyId, MAX_FLAGS_PER_ENVIRONMENT - 1],
    );
    const answers = await race((i) =>
      h.request('PUT', `/platform/feature_flags/environments/${environment.json.id}/flags/race_${i}`, {
        key: team.key,
        idempotencyKey: `flag-race-${i}`,
        body: { enabled: true },
      }),
    );
    expectExactly(answers, 1, 201, quota);
    const [row] = await h.services.db.query(`SELECT count(*)::int AS n FROM feature_flags WHERE environment_id = $1`, [
      environment.json.id,
    ]);
    expect(row.n).toBe(MAX_FLAGS_PER_ENVIRONMENT);
  });

  it('max_active_replays', async () => {
    const { team, tenantId } = await teamWithTenant('replays');
    const endpoint = await post(
      h,
      '/endpoints',
      { tenant_id: tenantId, url: 'https://receiver.example.com/replays' },
      { key: team.key },
    );
    const replay = () => post(h, '/replays', { endpoint_id: endpoint.json.id }, { key: team.key });
    for (let i = 1; i < LIMITS.max_active_replays; i += 1) expect((await replay()).status).toBe(202);
    const answers = await race(() => replay());
    expectExactly(answers, 1, 202, quota);
    expect(
      await count(
        `SELECT count(*) AS n FROM replays WHERE team_id = $1 AND status IN ('running', 'delivering')`,
        team.teamId,
      ),
    ).toBe(LIMITS.max_active_replays);
  });

  it('max_pending_deliveries, over messages, endpoint tests and captures at once', async () => {
    const { team, tenantId } = await teamWithTenant('pending');
    await post(h, '/event_types', { name: 'pending.event' }, { key: team.key });
    const endpoint = await post(
      h,
      '/endpoints',
      { tenant_id: tenantId, url: 'https://receiver.example.com/pending' },
      { key: team.key },
    );
    const source = await post(
      h,
      '/sources',
      { tenant_id: tenantId, name: 'in', event_type: 'pending.event', verification: { kind: 'bearer' } },
      { key: team.key },
    );
    const message = (n: number) =>
      post(h, '/messages', { tenant_id: tenantId, event_type: 'pending.event', payload: { n } }, { key: team.key });
    const capture = (n: number) =>
      h.request('POST', `${h.rootUrl}${new URL(source.json.receive_url).pathname}`, {
        key: null,
        headers: { authorization: `Bearer ${source.json.secret}` },
        body: { captured: n },
      });
    const test = () => post(h, `/endpoints/${endpoint.json.id}/test`, {}, { key: team.key });
    // One delivery each: room for 2 more.
    for (let n = 0; n < LIMITS.max_pending_deliveries - 2; n += 1) expect((await message(n)).status).toBe(202);
    const answers = await Promise.all([message(100), message(101), capture(1), capture(2), test(), test()]);
    const codes = answers.map((a) =>
      a.status === 200 || a.status === 202 ? 'ok' : `${a.status} ${a.json?.error?.code}`,
    );
    expect(
      codes.filter((c) => c === 'ok'),
      codes.join(', '),
    ).toHaveLength(2);
    expect(codes.filter((c) => c !== 'ok')).toEqual(Array(4).fill('429 queue_full'));
    expect(
      await count(
        `SELECT count(*) AS n FROM deliveries WHERE team_id = $1 AND status IN ('queued', 'in_flight', 'retry_wait')`,
        team.teamId,
      ),
    ).toBe(LIMITS.max_pending_deliveries);
  });

  it('max_content_bytes, over messages and captures at once', async () => {
    // No endpoint: only the stored bodies count, 200 bytes each.
    const { team, tenantId } = await teamWithTenant('content');
    await post(h, '/event_types', { name: 'content.event' }, { key: team.key });
    const source = await post(
      h,
      '/sources',
      { tenant_id: tenantId, name: 'in', event_type: 'content.event', verification: { kind: 'bearer' } },
      { key: team.key },
    );
    const body = (n: number) => {
      const text = JSON.stringify({ n, pad: 'x'.repeat(200 - 15 - String(n).length) });
      expect(Buffer.byteLength(text)).toBe(200);
      return text;
    };
    const message = (n: number) =>
      post(
        h,
        '/messages',
        { tenant_id: tenantId, event_type: 'content.event', payload: JSON.parse(body(n)) },
        { key: team.key },
      );
    const capture = (n: number) =>
      h.request('POST', `${h.rootUrl}${new URL(source.json.receive_url).pathname}`, {
        key: null,
        headers: { authorization: `Bearer ${source.json.secret}`, 'content-type': 'application/json' },
        body: body(n),
        raw: true,
      });
    for (let n = 0; n < LIMITS.max_content_bytes / 200 - 2; n += 1) expect((await message(n)).status).toBe(202);
    const answers = await Promise.all([message(100), message(101), message(102), capture(1), capture(2), capture(3)]);
    const codes = answers.map((a) =>
      a.status === 200 || a.status === 202 ? 'ok' : `${a.status} ${a.json?.error?.code}`,
    );
    expect(
      codes.filter((c) => c === 'ok'),
      codes.join(', '),
    ).toHaveLength(2);
    expect(codes.filter((c) => c !== 'ok')).toEqual(Array(4).fill('429 queue_full'));
    expect(
      await count(
        `SELECT coalesce(sum(octet_length(body)), 0) AS n FROM message_contents WHERE team_id = $1`,
        team.teamId,
      ),
    ).toBe(LIMITS.max_content_bytes);
  });
});
