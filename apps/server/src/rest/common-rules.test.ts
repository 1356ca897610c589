import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function createTenant(externalId: string, key?: string) {
  const response = await post(
    h,
    '/tenants',
    { external_id: externalId, name: `Tenant ${externalId}` },
    key ? { key } : {},
  );
  expect(response.status).toBe(201);
  return response;
}

describe('Svc-Mode is checked before anything else', () => {
  it('answers 422 unsupported_mode for test, even without a key', async () => {
    const response = await h.request('GET', '/tenants', { key: null, headers: { 'svc-mode': 'test' } });
    expect(response.status).toBe(422);
    expect(response.json.error.code).toBe('unsupported_mode');
  });
  it('answers 422 invalid_field for any other value, before JSON and auth checks', async () => {
    const response = await h.request('POST', '/tenants', {
      key: 'nope',
      headers: { 'svc-mode': 'LIVE', 'content-type': 'text/plain' },
      body: '{',
      raw: true,
    });
    expect(response.status).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field: 'Svc-Mode' });
  });
  it('accepts live', async () => {
    const response = await h.request('GET', '/tenants', { headers: { 'svc-mode': 'live' } });
    expect(response.status).toBe(200);
  });
});

describe('authentication', () => {
  it.each([
    ['missing', null],
    ['malformed', 'hello'],
    ['unknown', 'svc_sk_' + 'A'.repeat(43)],
  ])('answers 401 unauthorized for a %s key', async (_name, key) => {
    const response = await h.request('GET', '/capabilities', { key });
    expect(response.status).toBe(401);
    expect(response.json).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
  });

  it('answers 401 for a revoked key, a publishable key and a key without webhooks permission', async () => {
    const team = await h.newTeam('auth');
    const revoked = await h.services.teams.createKey(team.teamId);
    await h.services.teams.revokeKey(revoked.keyId);
    const publishable = await h.services.teams.createKey(team.teamId, { kind: 'publishable' });
    const noWebhooks = await h.services.teams.createKey(team.teamId, { webhooksAllowed: false });
    for (const secret of [revoked.secret, publishable.secret, noWebhooks.secret]) {
      const response = await h.request('GET', '/capabilities', { key: secret });
      expect(response.status).toBe(401);
      expect(response.json.error.code).toBe('unauthorized');
    }
    expect((await h.request('GET', '/capabilities', { key: team.key })).status).toBe(200);
  });

  it('answers 403 account_suspended for a suspended team or suspended webhooks use, and recovers', async () => {
    const team = await h.newTeam('suspended');
    await h.services.teams.setSuspension(team.teamId, { suspended: true, webhooksSuspended: false });
    let response = await h.request('GET', '/tenants', { key: team.key });
    expect(response.status).toBe(403);
    expect(response.json.error.code).toBe('account_suspended');
    await h.services.teams.setSuspension(team.teamId, { suspended: false, webhooksSuspended: true });
    response = await h.request('GET', '/tenants', { key: team.key });
    expect(response.json.error.code).toBe('account_suspended');
    await h.services.teams.setSuspension(team.teamId, { suspended: false, webhooksSuspended: false });
    expect((await h.request('GET', '/tenants', { key: team.key })).status).toBe(200);
  });

  it('puts a Request-Id on successful responses', async () => {
    const response = await h.request('GET', '/capabilities');
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9_-]{10,}$/);
  });
});

describe('request bodies', () => {
  it('answers 415 for a body that is not application/json', async () => {
    const response = await h.request('POST', '/tenants', {
      idempotencyKey: uniqueKey(),
      headers: { 'content-type': 'text/plain' },
      body: '{"external_id":"a","name":"b"}',
      raw: true,
    });
    expect(response.status).toBe(415);
    expect(response.json.error.code).toBe('unsupported_media_type');
  });
  it('answers 413 for a body over 1 MiB', async () => {
    const big = JSON.stringify({ external_id: 'big', name: 'x'.repeat(1_048_576) });
    const response = await h.request('POST', '/tenants', { idempotencyKey: uniqueKey(), body: big, raw: true });
    expect(response.status).toBe(413);
    expect(response.json.error.code).toBe('body_too_large');
  });
  it.each([
    ['invalid JSON', '{"external_id": "a",'],
    ['an array', '[1,2]'],
    ['a string', '"x"'],
    ['a duplicate key', '{"external_id":"a","name":"b","name":"c"}'],
    ['a duplicate key spelled with an escape', '{"name":"b","n\\u0061me":"c","external_id":"z"}'],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
  ])('answers 400 invalid_json for %s', async (_name, body) => {
    const response = await h.request('POST', '/tenants', { idempotencyKey: uniqueKey(), body, raw: true });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('invalid_json');
  });
  it('answers 422 invalid_field naming an unknown field', async () => {
    const response = await post(h, '/tenants', { external_id: 'u1', name: 'n', colour: 'red' });
    expect(response.status).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field: 'colour' });
  });
  it('says which type a present field of the wrong type needs, and calls only absent fields required', async () => {
    const wrongType = await post(h, '/tenants', { external_id: 123, name: 'n' });
    expect(wrongType.status).toBe(422);
    expect(wrongType.json.error).toEqual({
      code: 'invalid_field',
      message: 'external_id must be a string, not a number',
      field: 'external_id',
    });
    const nullName = await post(h, '/tenants', { external_id: 'typed', name: null });
    expect(nullName.json.error).toMatchObject({ field: 'name', message: 'name must be a string, not null' });
    const nested = await post(h, '/tenants', { external_id: 'typed', name: 'n', metadata: { plan: 7 } });
    expect(nested.json.error).toMatchObject({
      field: 'metadata.plan',
      message: 'metadata.plan must be a string, not a number',
    });
    const settings = await h.request('GET', '/settings');
    const integer = await h.request('PATCH', '/settings', {
      ifMatch: settings.headers.get('etag')!,
      body: { payload_retention_days: '7' },
    });
    expect(integer.json.error).toMatchObject({
      field: 'payload_retention_days',
      message: 'payload_retention_days must be a number, not a string',
    });
    const missing = await post(h, '/tenants', { name: 'n' });
    expect(missing.json.error).toMatchObject({ field: 'external_id', message: 'external_id is required' });
  });
  it('accepts application/json with a utf-8 charset', async () => {
    const response = await post(
      h,
      '/tenants',
      { external_id: 'charset', name: 'n' },
      { headers: { 'content-type': 'application/json; charset=utf-8' } },
    );
    expect(response.status).toBe(201);
  });
});

describe('Idempotency-Key', () => {
  it('is required on POST: 422 invalid_field when missing or malformed', async () => {
    let response = await h.request('POST', '/tenants', { body: { external_id: 'k1', name: 'n' } });
    expect(response.status).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
    response = await h.request('POST', '/tenants', {
      body: { external_id: 'k1', name: 'n' },
      idempotencyKey: 'x'.repeat(129),
    });
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
    response = await h.request('POST', '/tenants', {
      body: { external_id: 'k1', name: 'n' },
      headers: { 'idempotency-key': 'caf\u00e9' },
    });
    expect(response.status).toBe(422);
  });

  it('replays the first response with Idempotency-Replayed: true, ignoring key order, whitespace and omitted defaults', async () => {
    const key = uniqueKey();
    const first = await h.request('POST', '/tenants', {
      idempotencyKey: key,
      body: { external_id: 'idem-1', name: 'First' },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const again = await h.request('POST', '/tenants', {
      idempotencyKey: key,
      body: '{ "name" : "First",\n "metadata": {}, "external_id":"idem-1" }',
      raw: true,
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    const list = await h.request('GET', '/tenants?external_id=idem-1');
    expect(list.json.data).toHaveLength(1);
  });

  it('answers 409 idempotency_conflict for a different request with the same key', async () => {
    const key = uniqueKey();
    expect(
      (await h.request('POST', '/tenants', { idempotencyKey: key, body: { external_id: 'idem-2', name: 'A' } })).status,
    ).toBe(201);
    const response = await h.request('POST', '/tenants', {
      idempotencyKey: key,
      body: { external_id: 'idem-2', name: 'B' },
    });
    expect(response.status).toBe(409);
    expect(response.json.error.code).toBe('idempotency_conflict');
    const otherRoute = await h.request('POST', '/event_types', { idempotencyKey: key, body: { name: 'idem.two' } });
    expect(otherRoute.json.error.code).toBe('idempotency_conflict');
  });

  it('is not consumed by a failed validation or a failed request', async () => {
    const key = uniqueKey();
    const invalid = await h.request('POST', '/tenants', {
      idempotencyKey: key,
      body: { external_id: 'bad id!', name: 'A' },
    });
    expect(invalid.status).toBe(422);
    await createTenant('idem-taken');
    const conflict = await h.request('POST', '/tenants', {
      idempotencyKey: key,
      body: { external_id: 'idem-taken', name: 'A' },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('resource_in_use');
    const ok = await h.request('POST', '/tenants', { idempotencyKey: key, body: { external_id: 'idem-3', name: 'A' } });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotency-replayed')).toBeNull();
  });

  it('is scoped to the team', async () => {
    const key = uniqueKey();
    const other = await h.newTeam('other-idem');
    expect(
      (await h.request('POST', '/tenants', { idempotencyKey: key, body: { external_id: 'scoped', name: 'A' } })).status,
    ).toBe(201);
    const response = await h.request('POST', '/tenants', {
      key: other.key,
      idempotencyKey: key,
      body: { external_id: 'scoped', name: 'A' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('idempotency-replayed')).toBeNull();
  });

  it('executes exactly once under concurrent requests; the others see request_in_progress or the replay', async () => {
    const key = uniqueKey();
    const body = { external_id: 'concurrent', name: 'Concurrent' };
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => h.request('POST', '/tenants', { idempotencyKey: key, body })),
    );
    const created = responses.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') === null);
    expect(created).toHaveLength(1);
    for (const response of responses) {
      if (response === created[0]) continue;
      if (response.status === 409) {
        expect(response.json.error.code).toBe('request_in_progress');
        expect(response.headers.get('retry-after')).toBe('1');
      } else {
        expect(response.status).toBe(201);
        expect(response.headers.get('idempotency-replayed')).toBe('true');
        expect(response.json.id).toBe(created[0]!.json.id);
      }
    }
    const list = await h.request('GET', '/tenants?external_id=concurrent');
    expect(list.json.data).toHaveLength(1);
  });

  it('keeps a completed key for 35 days', async () => {
    const key = uniqueKey();
    const body = { external_id: 'retained', name: 'R' };
    const first = await h.request('POST', '/tenants', { idempotencyKey: key, body });
    h.clock.advance(34 * 24 * 3600 * 1000);
    const replay = await h.request('POST', '/tenants', { idempotencyKey: key, body });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json.id).toBe(first.json.id);
    h.clock.advance(2 * 24 * 3600 * 1000);
    const after = await h.request('POST', '/tenants', { idempotencyKey: key, body });
    expect(after.status).toBe(409);
    expect(after.json.error.code).toBe('resource_in_use');
    expect(await h.services.idempotency.purgeExpired()).toBeGreaterThan(0);
  });
});

describe('If-Match', () => {
  it('is required on PATCH and DELETE (428), must be one quoted ETag (422), and must be current (412 with the ETag)', async () => {
    const created = await createTenant('ifmatch');
    const id = created.json.id as string;
    const etag = created.headers.get('etag')!;
    expect(etag).toBe(`"wd:${id}:1"`);
    for (const method of ['PATCH', 'DELETE']) {
      const missing = await h.request(method, `/tenants/${id}`, method === 'PATCH' ? { body: { name: 'x' } } : {});
      expect(missing.status).toBe(428);
      expect(missing.json.error.code).toBe('precondition_required');
      // The message says where the value comes from.
      expect(missing.json.error.message).toMatch(
        /^If-Match is required: send If-Match with the ETag header from (a )?GET/,
      );
      const malformed = await h.request(method, `/tenants/${id}`, {
        ifMatch: 'wd:nope',
        ...(method === 'PATCH' ? { body: { name: 'x' } } : {}),
      });
      expect(malformed.status).toBe(422);
      expect(malformed.json.error).toMatchObject({ code: 'invalid_field', field: 'If-Match' });
      const weak = await h.request(method, `/tenants/${id}`, {
        ifMatch: `W/${etag}`,
        ...(method === 'PATCH' ? { body: { name: 'x' } } : {}),
      });
      expect(weak.status).toBe(422);
    }
    const changed = await h.request('PATCH', `/tenants/${id}`, { ifMatch: etag, body: { name: 'Renamed' } });
    expect(changed.status).toBe(200);
    const newEtag = changed.headers.get('etag');
    expect(newEtag).toBe(`"wd:${id}:2"`);
    const stale = await h.request('PATCH', `/tenants/${id}`, { ifMatch: etag, body: { name: 'Again' } });
    expect(stale.status).toBe(412);
    expect(stale.json.error.code).toBe('revision_conflict');
    expect(stale.headers.get('etag')).toBe(newEtag);
    const staleDelete = await h.request('DELETE', `/tenants/${id}`, { ifMatch: etag });
    expect(staleDelete.status).toBe(412);
    expect(staleDelete.headers.get('etag')).toBe(newEtag);
  });
});

describe('lists and cursors', () => {
  it('pages oldest first with limit 1-200 (default 50) and a cursor bound to team, list and filters', async () => {
    const team = await h.newTeam('paging');
    for (let i = 0; i < 55; i += 1)
      await h.services.tenants.createTenant(
        { actor: team },
        { external_id: `p-${String(i).padStart(2, '0')}`, name: `P ${i}`, metadata: {} },
      );
    const first = await h.request('GET', '/tenants', { key: team.key });
    expect(first.json.data).toHaveLength(50);
    expect(first.json.data[0].external_id).toBe('p-00');
    const second = await h.request('GET', `/tenants?cursor=${first.json.next_cursor}`, { key: team.key });
    expect(second.json.data.map((t: { external_id: string }) => t.external_id)).toEqual([
      'p-50',
      'p-51',
      'p-52',
      'p-53',
      'p-54',
    ]);
    expect(second.json.next_cursor).toBeNull();
    const small = await h.request('GET', '/tenants?limit=1', { key: team.key });
    expect(small.json.data).toHaveLength(1);
    expect((await h.request('GET', '/tenants?limit=200', { key: team.key })).json.data).toHaveLength(55);
    for (const bad of ['0', '201', 'abc', '1.5', '-1']) {
      const response = await h.request('GET', `/tenants?limit=${bad}`, { key: team.key });
      expect(response.status).toBe(422);
      expect(response.json.error).toMatchObject({ code: 'invalid_field', field: 'limit' });
    }
    const cursor = first.json.next_cursor as string;
    const otherTeam = await h.request('GET', `/tenants?cursor=${cursor}`);
    expect(otherTeam.status).toBe(422);
    expect(otherTeam.json.error.code).toBe('invalid_cursor');
    const otherList = await h.request('GET', `/event_types?cursor=${cursor}`, { key: team.key });
    expect(otherList.json.error.code).toBe('invalid_cursor');
    const otherFilter = await h.request('GET', `/tenants?external_id=p-01&cursor=${cursor}`, { key: team.key });
    expect(otherFilter.json.error.code).toBe('invalid_cursor');
    const garbage = await h.request('GET', `/tenants?cursor=not-a-cursor`, { key: team.key });
    expect(garbage.json.error.code).toBe('invalid_cursor');
  });

  it('rejects unknown query parameters', async () => {
    const response = await h.request('GET', '/tenants?colour=red');
    expect(response.status).toBe(422);
    expect(response.json.error).toMatchObject({ code: 'invalid_field', field: 'colour' });
  });
});

describe('tenancy', () => {
  it("answers 404 for another team's IDs on read, patch and delete", async () => {
    const created = await createTenant('mine');
    const other = await h.newTeam('intruder');
    const id = created.json.id as string;
    const etag = created.headers.get('etag')!;
    expect((await h.request('GET', `/tenants/${id}`, { key: other.key })).status).toBe(404);
    expect(
      (await h.request('PATCH', `/tenants/${id}`, { key: other.key, ifMatch: etag, body: { name: 'x' } })).status,
    ).toBe(404);
    const deleted = await h.request('DELETE', `/tenants/${id}`, { key: other.key, ifMatch: etag });
    expect(deleted.status).toBe(404);
    expect(deleted.json.error.code).toBe('not_found');
    expect((await h.request('GET', `/tenants/${id}`)).json.status).toBe('active');
  });

  it('answers 404 not_found for unknown routes', async () => {
    const response = await h.request('GET', '/nothing-here');
    expect(response.status).toBe(404);
    expect(response.json.error.code).toBe('not_found');
  });
});

describe('rate limits', () => {
  it('answers 429 rate_limited with Retry-After past the read burst of 200, and refills with time', async () => {
    const team = await h.newTeam('reads');
    const statuses: number[] = [];
    for (let i = 0; i < 201; i += 1) statuses.push((await h.request('GET', '/capabilities', { key: team.key })).status);
    expect(statuses.slice(0, 200).every((s) => s === 200)).toBe(true);
    const limited = await h.request('GET', '/capabilities', { key: team.key });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    h.clock.advance(1000);
    expect((await h.request('GET', '/capabilities', { key: team.key })).status).toBe(200);
  });

  it('limits config writes to a burst of 40 per team, separately from reads', async () => {
    const team = await h.newTeam('writes');
    let accepted = 0;
    let limited = 0;
    for (let i = 0; i < 41; i += 1) {
      const response = await post(h, '/event_types', { name: `burst.t${i}` }, { key: team.key });
      if (response.status === 201) accepted += 1;
      if (response.status === 429) limited += 1;
    }
    expect(accepted).toBe(40);
    expect(limited).toBe(1);
    expect((await h.request('GET', '/event_types', { key: team.key })).status).toBe(200);
    h.clock.advance(100);
    expect((await post(h, '/event_types', { name: 'burst.after' }, { key: team.key })).status).toBe(201);
  });
});
