import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness, type TestTeam } from '../testing/harness.js';

/**
 * Feature-flag environments and flags through REST (docs/platform.md): the common rules, exact values, If-Match
 * and ETags, one event and one revision per committed change, and keys restricted to some environments.
 */
let h: Harness;
let environmentId: string;

beforeAll(async () => {
  h = await startHarness();
  environmentId = (await post(h, '/platform/feature_flags/environments', { name: 'production' })).json.id;
});
afterAll(async () => {
  await h.close();
});

const flagPath = (key: string, environment = environmentId) =>
  `/platform/feature_flags/environments/${environment}/flags/${key}`;

function put(
  key: string,
  body: unknown,
  options: { ifMatch?: string; key?: string; idempotencyKey?: string; environment?: string } = {},
) {
  // The clock stands still: move it so the config-write bucket refills between requests.
  h.clock.advance(200);
  return h.request('PUT', flagPath(key, options.environment), {
    idempotencyKey: options.idempotencyKey ?? uniqueKey(),
    body,
    ...(options.ifMatch ? { ifMatch: options.ifMatch } : {}),
    ...(options.key ? { key: options.key } : {}),
  });
}

async function events(query = ''): Promise<ApiResponse> {
  const r = await h.request('GET', `/platform/events${query}`);
  expect(r.status, r.text).toBe(200);
  return r;
}

describe('environments', () => {
  it('creates, reads and lists environments; names are unique per team whatever their case', async () => {
    const created = await post(h, '/platform/feature_flags/environments', { name: 'Staging' });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^ffe_[0-9a-z]{26}$/),
      name: 'Staging',
      revision: '0',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(created.headers.get('etag')).toBe(`"wd:${created.json.id}:0"`);
    const clash = await post(h, '/platform/feature_flags/environments', { name: 'staging' });
    expect(clash.status).toBe(409);
    expect(clash.json.error).toMatchObject({ code: 'resource_in_use', resource_id: created.json.id });
    for (const name of ['', ' padded', 'x'.repeat(129)]) {
      const bad = await post(h, '/platform/feature_flags/environments', { name });
      expect(bad.json.error, name).toMatchObject({ code: 'invalid_field', field: 'name' });
    }
    const got = await h.request('GET', `/platform/feature_flags/environments/${created.json.id}`);
    expect(got.json).toEqual(created.json);
    const list = await h.request('GET', '/platform/feature_flags/environments?limit=1');
    expect(list.json.data).toHaveLength(1);
    const next = await h.request('GET', `/platform/feature_flags/environments?limit=1&cursor=${list.json.next_cursor}`);
    expect(next.json.data[0].id).toBe(created.json.id);
    const other = await h.newTeam('other');
    expect(
      (await h.request('GET', `/platform/feature_flags/environments/${created.json.id}`, { key: other.key })).status,
    ).toBe(404);
    expect((await h.request('GET', '/platform/feature_flags/environments', { key: other.key })).json.data).toEqual([]);
  });
});

describe('flags', () => {
  it('PUT creates (201) and keeps the value exactly; a change needs If-Match (428, 412) and raises the revision', async () => {
    const created = await h.request('PUT', flagPath('checkout.v2'), {
      idempotencyKey: uniqueKey(),
      raw: true,
      body: '{"enabled": true, "description": "New checkout", "value": {"pct": 1.50e1, "list": [1, "\\u00e9"]}}',
    });
    expect(created.status, created.text).toBe(201);
    expect(created.text).toContain('"value":{"pct":1.50e1,"list":[1,"\\u00e9"]}');
    expect(created.json).toMatchObject({
      environment_id: environmentId,
      key: 'checkout.v2',
      enabled: true,
      description: 'New checkout',
      version: '1',
      created_by: h.team.keyId,
      updated_by: h.team.keyId,
    });
    const revision = Number(created.json.revision);
    const etag = created.headers.get('etag')!;
    expect(etag).toBe(`"wd:${environmentId}/checkout.v2:1"`);

    const blind = await put('checkout.v2', { enabled: false });
    expect(blind.status).toBe(428);
    expect(blind.json.error.code).toBe('precondition_required');
    const stale = await put('checkout.v2', { enabled: false }, { ifMatch: `"wd:${environmentId}/checkout.v2:0"` });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('etag')).toBe(etag);

    const changed = await put(
      'checkout.v2',
      { enabled: false, description: 'New checkout', value: { pct: 15 } },
      { ifMatch: etag },
    );
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      enabled: false,
      version: '2',
      revision: String(revision + 1),
      value: { pct: 15 },
    });
    const env = await h.request('GET', `/platform/feature_flags/environments/${environmentId}`);
    expect(env.json.revision).toBe(String(revision + 1));

    // A PUT that changes nothing commits nothing: same version and revision, no event.
    const before = (await events()).json.data.length;
    const same = await put(
      'checkout.v2',
      { enabled: false, description: 'New checkout', value: { pct: 15 } },
      { ifMatch: changed.headers.get('etag')! },
    );
    expect(same.status).toBe(200);
    expect(same.json).toMatchObject({ version: '2', revision: String(revision + 1) });
    expect((await events()).json.data.length).toBe(before);

    const read = await h.request('GET', flagPath('checkout.v2'));
    expect(read.headers.get('etag')).toBe(changed.headers.get('etag'));
    expect(read.json).toEqual(changed.json);
    // PUT replaces the whole flag: omitted description and value become "" and null.
    const replaced = await put('checkout.v2', { enabled: true }, { ifMatch: read.headers.get('etag')! });
    expect(replaced.json).toMatchObject({ description: '', value: null, version: '3' });
  });

  it('refuses bad keys, bodies and sizes with 422, and If-Match on a flag that does not exist with 412', async () => {
    for (const key of ['has%20space', 'x'.repeat(129), 'sl%2Fash', 'star*']) {
      const r = await put(key, { enabled: true });
      expect(r.status, key).toBe(422);
      expect(r.json.error.code, key).toBe('invalid_field');
    }
    expect((await put('k'.repeat(128), { enabled: true })).status).toBe(201);
    expect((await put('a', {})).json.error).toMatchObject({ code: 'invalid_field', field: 'enabled' });
    expect((await put('a', { enabled: 'yes' })).json.error).toMatchObject({ code: 'invalid_field', field: 'enabled' });
    expect((await put('a', { enabled: true, rules: [] })).json.error).toMatchObject({ field: 'rules' });
    expect((await put('a', { enabled: true, value: 'x'.repeat(40_000) })).json.error).toMatchObject({ field: 'value' });
    const missingKey = await h.request('PUT', flagPath('a'), { body: { enabled: true } });
    expect(missingKey.json.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
    const ghost = await put('ghost', { enabled: true }, { ifMatch: `"wd:${environmentId}/ghost:1"` });
    expect(ghost.status).toBe(412);
    expect((await h.request('GET', flagPath('ghost'))).status).toBe(404);
    expect((await put('x', { enabled: true }, { environment: 'ffe_00000000000000000000000000' })).status).toBe(404);
    const mode = await h.request('PUT', flagPath('a'), { headers: { 'svc-mode': 'test' }, body: { enabled: true } });
    expect(mode.json.error.code).toBe('unsupported_mode');
  });

  it('lists flags in key order with cursors; DELETE needs If-Match and answers the new revision', async () => {
    const env = (await post(h, '/platform/feature_flags/environments', { name: 'listing' })).json.id as string;
    for (const key of ['b', 'a', 'c.1', 'C'])
      expect((await put(key, { enabled: true }, { environment: env })).status).toBe(201);
    const first = await h.request('GET', `/platform/feature_flags/environments/${env}/flags?limit=3`);
    expect(first.json.data.map((f: { key: string }) => f.key)).toEqual(['C', 'a', 'b']);
    const rest = await h.request(
      'GET',
      `/platform/feature_flags/environments/${env}/flags?limit=3&cursor=${first.json.next_cursor}`,
    );
    expect(rest.json.data.map((f: { key: string }) => f.key)).toEqual(['c.1']);
    expect(rest.json.next_cursor).toBeNull();

    const flag = await h.request('GET', flagPath('b', env));
    expect((await h.request('DELETE', flagPath('b', env))).status).toBe(428);
    const deleted = await h.request('DELETE', flagPath('b', env), { ifMatch: flag.headers.get('etag')! });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.json).toEqual({ environment_id: env, key: 'b', deleted: true, revision: '5' });
    expect((await h.request('GET', flagPath('b', env))).status).toBe(404);
    const event = (await events(`?environment_id=${env}&limit=1`)).json.data[0];
    expect(event).toMatchObject({ revision: '5', data: { flag_key: 'b', change: 'deleted', changed_fields: [] } });
  });

  it('writes one feature_flags.flag.updated event per committed change, in the same transaction, without values', async () => {
    const env = (await post(h, '/platform/feature_flags/environments', { name: 'events' })).json.id as string;
    const created = await put(
      'secret.sauce',
      { enabled: true, description: 'do not leak', value: { token: 'VALUE-123' } },
      { environment: env },
    );
    await put(
      'secret.sauce',
      { enabled: true, description: 'do not leak', value: { token: 'VALUE-456' } },
      { environment: env, ifMatch: created.headers.get('etag')! },
    );
    const list = await events(`?environment_id=${env}`);
    expect(list.json.data).toHaveLength(2);
    const [updated, first] = list.json.data;
    expect(first).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
      type: 'feature_flags.flag.updated',
      created_at: expect.any(String),
      team_id: h.team.teamId,
      environment_id: env,
      revision: '1',
      data: {
        flag_key: 'secret.sauce',
        change: 'created',
        changed_fields: ['enabled', 'value', 'description'],
        flag_version: '1',
        actor_key_id: h.team.keyId,
      },
    });
    expect(updated).toMatchObject({
      revision: '2',
      data: { change: 'updated', changed_fields: ['value'], flag_version: '2' },
    });
    expect(list.text).not.toContain('VALUE-');
    expect(list.text).not.toContain('do not leak');
    const one = await h.request('GET', `/platform/events/${first.id}`);
    expect(one.json).toEqual(first);
    expect((await events('?type=feature_flags.webhook.test')).json.data).toEqual([]);
    const other = await h.newTeam('events-other');
    expect((await h.request('GET', `/platform/events/${first.id}`, { key: other.key })).status).toBe(404);
    // A refused change writes nothing.
    await put('secret.sauce', { enabled: false }, { environment: env, ifMatch: created.headers.get('etag')! });
    expect((await events(`?environment_id=${env}`)).json.data).toHaveLength(2);
  });

  it('concurrent changes of one environment get distinct revisions, one event each, in commit order', async () => {
    const env = (await post(h, '/platform/feature_flags/environments', { name: 'concurrent' })).json.id as string;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => put(`f${i}`, { enabled: i % 2 === 0 }, { environment: env })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    const revisions = results.map((r) => Number(r.json.revision)).sort((a, b) => a - b);
    expect(revisions).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const list = await events(`?environment_id=${env}`);
    expect(
      list.json.data.map((e: { revision: string }) => Number(e.revision)).sort((a: number, b: number) => a - b),
    ).toEqual(revisions);
  });

  it('an idempotent retry compares body and If-Match: same request replays, another gives 409', async () => {
    const created = await put('idem', { enabled: true });
    const key = uniqueKey();
    const first = await put('idem', { enabled: false }, { ifMatch: created.headers.get('etag')!, idempotencyKey: key });
    expect(first.status).toBe(200);
    const replay = await put(
      'idem',
      { enabled: false },
      { ifMatch: created.headers.get('etag')!, idempotencyKey: key },
    );
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json).toEqual(first.json);
    const otherHeader = await put(
      'idem',
      { enabled: false },
      { ifMatch: first.headers.get('etag')!, idempotencyKey: key },
    );
    expect(otherHeader.json.error.code).toBe('idempotency_conflict');
    const otherBody = await put(
      'idem',
      { enabled: true },
      { ifMatch: created.headers.get('etag')!, idempotencyKey: key },
    );
    expect(otherBody.json.error.code).toBe('idempotency_conflict');
  });
});

describe('keys restricted to some environments', () => {
  let restricted: TestTeam;
  let allowed: string;
  let denied: string;

  beforeAll(async () => {
    allowed = (await post(h, '/platform/feature_flags/environments', { name: 'allowed' })).json.id;
    denied = (await post(h, '/platform/feature_flags/environments', { name: 'denied' })).json.id;
    const issued = await h.services.teams.createKey(h.team.teamId, { environmentIds: [allowed] });
    restricted = { teamId: h.team.teamId, keyId: issued.keyId, key: issued.secret };
  });

  it('administer only their environments: 403 environment_access_denied elsewhere, for flags and subscriptions', async () => {
    expect((await put('ok', { enabled: true }, { environment: allowed, key: restricted.key })).status).toBe(201);
    const refused = await put('no', { enabled: true }, { environment: denied, key: restricted.key });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: 'environment_access_denied', resource_id: denied });
    const created = await put('owned', { enabled: true }, { environment: denied });
    const del = await h.request('DELETE', flagPath('owned', denied), {
      key: restricted.key,
      ifMatch: created.headers.get('etag')!,
    });
    expect(del.json.error.code).toBe('environment_access_denied');
    const newEnv = await post(h, '/platform/feature_flags/environments', { name: 'new' }, { key: restricted.key });
    expect(newEnv.json.error.code).toBe('environment_access_denied');

    const subscribe = (environmentIds: string[], key?: string) =>
      post(
        h,
        '/platform/event_subscriptions',
        { url: 'https://receiver.example.com/hook', events: ['feature_flags.*'], environment_ids: environmentIds },
        key ? { key } : {},
      );
    expect((await subscribe([allowed], restricted.key)).status).toBe(201);
    expect((await subscribe([allowed, denied], restricted.key)).json.error).toMatchObject({
      code: 'environment_access_denied',
      resource_id: denied,
    });
    const wide = await subscribe([allowed, denied]);
    expect(wide.status).toBe(201);
    for (const attempt of [
      () =>
        h.request('PATCH', `/platform/event_subscriptions/${wide.json.id}`, {
          key: restricted.key,
          ifMatch: wide.headers.get('etag')!,
          body: { description: 'x' },
        }),
      () => h.request('DELETE', `/platform/event_subscriptions/${wide.json.id}`, { key: restricted.key }),
      () => post(h, `/platform/event_subscriptions/${wide.json.id}/rotate_secret`, {}, { key: restricted.key }),
      () => post(h, `/platform/event_subscriptions/${wide.json.id}/test`, {}, { key: restricted.key }),
    ]) {
      h.clock.advance(1000);
      const r = await attempt();
      expect(r.status, r.text).toBe(403);
      expect(r.json.error.code).toBe('environment_access_denied');
    }
    // Reads stay team-wide.
    expect(
      (await h.request('GET', `/platform/event_subscriptions/${wide.json.id}`, { key: restricted.key })).status,
    ).toBe(200);
    expect((await h.request('GET', flagPath('owned', denied), { key: restricted.key })).status).toBe(200);
  });
});
