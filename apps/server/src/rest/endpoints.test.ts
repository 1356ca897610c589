import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { DAY, SECOND } from '@svc/core';
import { post, startHarness, uniqueKey, type Harness, type TestTeam } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ limits: { max_endpoints_per_tenant: 3, max_endpoints: 5 } });
});
afterAll(async () => {
  await h.close();
});

const RECEIVER = 'https://receiver.example.com/hooks?token=abc&x=1';

async function setup(name = 'ep'): Promise<{ team: TestTeam; tenantId: string }> {
  const team = await h.newTeam(name);
  const tenant = await post(h, '/tenants', { external_id: `t-${name}`, name: 'Tenant' }, { key: team.key });
  expect(tenant.status).toBe(201);
  return { team, tenantId: tenant.json.id };
}

async function createEndpoint(team: TestTeam, body: Record<string, unknown>, idempotencyKey = uniqueKey()) {
  return h.request('POST', '/endpoints', { key: team.key, idempotencyKey, body });
}

describe('creating endpoints', () => {
  it('applies every default, returns the secret once and never on reads', async () => {
    const { team, tenantId } = await setup('defaults');
    const created = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    expect(created.status).toBe(201);
    const secret = created.json.signing_secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const decoded = Buffer.from(secret.slice(6), 'base64');
    expect(decoded.length).toBeGreaterThanOrEqual(24);
    expect(decoded.length).toBeLessThanOrEqual(64);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^wde_/),
      tenant_id: tenantId,
      url: RECEIVER,
      name: 'Webhook',
      description: '',
      events: ['*'],
      filter: null,
      transform: null,
      transform_version: '1',
      status: 'enabled',
      disabled_reason: null,
      rate_per_second: 50,
      max_concurrency: 3,
      retry_delays_seconds: [15, 60, 300, 900, 3600, 14400, 43200, 86400],
      timeout_seconds: 10,
      headers: [],
      has_authorization: false,
      metadata: {},
      secret_version: 1,
      old_secret_expires_at: null,
      health: {
        circuit: 'closed',
        consecutive_failures: 0,
        last_success_at: null,
        last_failure_at: null,
        next_probe_at: null,
      },
      queued_count: 0,
      url_revision: '1',
      version: '1',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      signing_secret: secret,
    });
    expect(created.headers.get('etag')).toBe(`"wd:${created.json.id}:1"`);
    const read = await h.request('GET', `/endpoints/${created.json.id}`, { key: team.key });
    expect(read.status).toBe(200);
    expect(read.json.signing_secret).toBeUndefined();
    expect(read.text).not.toContain(secret.slice(6));
    const list = await h.request('GET', `/endpoints?tenant_id=${tenantId}`, { key: team.key });
    expect(list.text).not.toContain(secret.slice(6));
    expect(list.json.data).toHaveLength(1);
  });

  it('keeps header values and authorization write-only and sealed at rest', async () => {
    const { team, tenantId } = await setup('writeonly');
    const created = await createEndpoint(team, {
      tenant_id: tenantId,
      url: RECEIVER,
      headers: { 'X-Api-Key': 'header-value-secret', 'X-Trace': 'on' },
      authorization: 'Bearer receiver-credential-xyz',
    });
    expect(created.json.headers).toEqual(['x-api-key', 'x-trace']);
    expect(created.json.has_authorization).toBe(true);
    expect(created.text).not.toContain('header-value-secret');
    expect(created.text).not.toContain('receiver-credential-xyz');
    const rows: { row: string }[] = await h.services.db.query(
      `SELECT row_to_json(e)::text AS row FROM endpoints e WHERE id = $1
       UNION ALL SELECT row_to_json(s)::text FROM endpoint_secrets s WHERE endpoint_id = $1
       UNION ALL SELECT row_to_json(i)::text FROM idempotency_records i WHERE team_id = $2`,
      [created.json.id, team.teamId],
    );
    const stored = rows.map((r) => r.row).join('\n');
    for (const secret of ['header-value-secret', 'receiver-credential-xyz', created.json.signing_secret.slice(6)]) {
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain(Buffer.from(secret).toString('hex'));
    }
    const entity = await h.services.endpoints.getEndpointEntity({ actor: team }, created.json.id);
    const credentials = await h.services.endpoints.credentials.forDelivery(h.services.db.manager, entity);
    expect(credentials).toEqual({
      headers: { 'X-Api-Key': 'header-value-secret', 'X-Trace': 'on' },
      authorization: 'Bearer receiver-credential-xyz',
      signingSecrets: [created.json.signing_secret],
    });
  });

  it.each([
    [{ url: undefined }, 'url'],
    [{ tenant_id: undefined }, 'tenant_id'],
    [{ events: [] }, 'events'],
    [{ events: Array.from({ length: 51 }, (_, i) => `e.t${i}`) }, 'events'],
    [{ events: ['Order.Created'] }, 'events.0'],
    [{ events: ['order.*.x'] }, 'events.0'],
    [{ events: ['a', 'a'] }, 'events'],
    [{ status: 'disabled' }, 'status'],
    [{ status: 'on' }, 'status'],
    [{ max_concurrency: 4 }, 'max_concurrency'],
    [{ max_concurrency: 0 }, 'max_concurrency'],
    [{ rate_per_second: 0 }, 'rate_per_second'],
    [{ rate_per_second: 1.5 }, 'rate_per_second'],
    [{ timeout_seconds: 31 }, 'timeout_seconds'],
    [{ timeout_seconds: 0 }, 'timeout_seconds'],
    [{ retry_delays_seconds: [1, 2, 3, 4, 5, 6, 7, 8, 9] }, 'retry_delays_seconds'],
    [{ retry_delays_seconds: [0] }, 'retry_delays_seconds.0'],
    [{ retry_delays_seconds: [86_401] }, 'retry_delays_seconds.0'],
    [{ retry_delays_seconds: [86_400, 86_400, 86_400, 1] }, 'retry_delays_seconds'],
    [{ headers: { 'bad name': 'x' } }, 'headers.bad name'],
    [{ headers: { 'Svc-Thing': 'x' } }, 'headers.Svc-Thing'],
    [{ headers: { 'webhook-id': 'x' } }, 'headers.webhook-id'],
    [{ headers: { Host: 'x' } }, 'headers.Host'],
    [{ headers: { 'Content-Type': 'x' } }, 'headers.Content-Type'],
    [{ headers: { Authorization: 'x' } }, 'headers.Authorization'],
    [{ headers: { Cookie: 'x' } }, 'headers.Cookie'],
    [{ headers: { 'X-Forwarded-For': 'x' } }, 'headers.X-Forwarded-For'],
    [{ headers: { 'Transfer-Encoding': 'x' } }, 'headers.Transfer-Encoding'],
    [{ headers: { Connection: 'x' } }, 'headers.Connection'],
    [{ headers: { 'X-A': 'line\nbreak' } }, 'headers.X-A'],
    [{ headers: { 'X-A': 'x'.repeat(1025) } }, 'headers.X-A'],
    [{ headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v'])) }, 'headers'],
    [{ headers: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`x-h${i}`, 'v'.repeat(1000)])) }, 'headers'],
    [{ headers: { 'X-A': '1', 'x-a': '2' } }, 'headers.x-a'],
    [{ authorization: 'Bearer a\r\nInjected: yes' }, 'authorization'],
    [{ authorization: '' }, 'authorization'],
    [{ description: 'x'.repeat(4097) }, 'description'],
    [{ name: '' }, 'name'],
    [{ metadata: { a: 1 } }, 'metadata.a'],
    [{ signing_secret: 'whsec_AAAA' }, 'signing_secret'],
    [{ health: {} }, 'health'],
    [{ filter: { bogus: [] } }, 'filter'],
    [{ filter: [] }, 'filter'],
    [{ transform: { fields: 'x' } }, 'transform'],
  ])('rejects %j with 422 invalid_field on %s', async (change, field) => {
    const { team, tenantId } = await setup(`bad-${uniqueKey()}`);
    const body: Record<string, unknown> = { tenant_id: tenantId, url: RECEIVER, ...change };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const response = await createEndpoint(team, body);
    expect(response.status).toBe(422);
    expect(response.json.error.code).toBe('invalid_field');
    expect(response.json.error.field.startsWith(field)).toBe(true);
  });

  it('accepts the documented bounds', async () => {
    const { team, tenantId } = await setup('bounds');
    const response = await createEndpoint(team, {
      tenant_id: tenantId,
      url: RECEIVER,
      events: Array.from({ length: 50 }, (_, i) => `e.t${i}`),
      retry_delays_seconds: [86_400, 86_400, 86_400],
      timeout_seconds: 30,
      max_concurrency: 1,
      rate_per_second: 1000,
      headers: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`x-h${i}`, 'v'.repeat(1000)])),
      status: 'paused',
    });
    expect(response.status).toBe(201);
    expect(response.json).toMatchObject({ status: 'paused', max_concurrency: 1, timeout_seconds: 30 });
    const none = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER, retry_delays_seconds: [] });
    expect(none.json.retry_delays_seconds).toEqual([]);
  });

  it('requires an active tenant of the team', async () => {
    const { team, tenantId } = await setup('tenant-rules');
    const other = await setup('tenant-other');
    const foreign = await createEndpoint(team, { tenant_id: other.tenantId, url: RECEIVER });
    expect(foreign.json.error).toMatchObject({ code: 'invalid_field', field: 'tenant_id' });
    const tenant = await h.request('GET', `/tenants/${tenantId}`, { key: team.key });
    await h.request('DELETE', `/tenants/${tenantId}`, { key: team.key, ifMatch: tenant.headers.get('etag')! });
    const deleted = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    expect(deleted.json.error).toMatchObject({ code: 'invalid_field', field: 'tenant_id' });
  });

  it('answers 409 quota_exceeded at the tenant limit and at the team limit', async () => {
    const { team, tenantId } = await setup('quota');
    for (let i = 0; i < 3; i += 1)
      expect((await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER })).status).toBe(201);
    const tenantFull = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    expect(tenantFull.status).toBe(409);
    expect(tenantFull.json.error.code).toBe('quota_exceeded');
    const second = await post(h, '/tenants', { external_id: 'quota-2', name: 'Two' }, { key: team.key });
    expect((await createEndpoint(team, { tenant_id: second.json.id, url: RECEIVER })).status).toBe(201);
    expect((await createEndpoint(team, { tenant_id: second.json.id, url: RECEIVER })).status).toBe(201);
    const teamFull = await createEndpoint(team, { tenant_id: second.json.id, url: RECEIVER });
    expect(teamFull.json.error.code).toBe('quota_exceeded');
    const first = (await h.request('GET', `/endpoints?tenant_id=${tenantId}&limit=1`, { key: team.key })).json.data[0];
    await h.request('DELETE', `/endpoints/${first.id}`, {
      key: team.key,
      ifMatch: `"wd:${first.id}:${first.version}"`,
    });
    expect((await createEndpoint(team, { tenant_id: second.json.id, url: RECEIVER })).status).toBe(201);
  });

  it('keeps filter and transform exactly as written', async () => {
    const { team, tenantId } = await setup('rules');
    const raw = `{"tenant_id":"${tenantId}","url":"${RECEIVER}","filter":{"all": [ {"path":"/amount","op":"gte","value":1.0e3} ]},"transform":{"fields":[{"name":"amt","from":"/amount","required":true}]}}`;
    const created = await h.request('POST', '/endpoints', {
      key: team.key,
      idempotencyKey: uniqueKey(),
      body: raw,
      raw: true,
    });
    expect(created.status).toBe(201);
    expect(created.text).toContain('"filter":{"all": [ {"path":"/amount","op":"gte","value":1.0e3} ]}');
    expect(created.text).toContain('"transform":{"fields":[{"name":"amt","from":"/amount","required":true}]}');
  });
});

describe('idempotent replays and secrets', () => {
  it('shows the secret only to the key that created it and only while it is current', async () => {
    const { team, tenantId } = await setup('replay');
    const otherKey = await h.services.teams.createKey(team.teamId);
    const idempotencyKey = uniqueKey();
    const body = { tenant_id: tenantId, url: RECEIVER };
    const first = await createEndpoint(team, body, idempotencyKey);
    const secret = first.json.signing_secret as string;
    const replay = await createEndpoint(team, body, idempotencyKey);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json.signing_secret).toBe(secret);
    expect(replay.json.id).toBe(first.json.id);
    const byOtherKey = await h.request('POST', '/endpoints', { key: otherKey.secret, idempotencyKey, body });
    expect(byOtherKey.headers.get('idempotency-replayed')).toBe('true');
    expect(byOtherKey.json.id).toBe(first.json.id);
    expect(byOtherKey.json.signing_secret).toBeUndefined();
    const rotated = await h.request('POST', `/endpoints/${first.json.id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: first.headers.get('etag')!,
      body: { overlap_seconds: 0 },
    });
    expect(rotated.status).toBe(200);
    const afterRotation = await createEndpoint(team, body, idempotencyKey);
    expect(afterRotation.json.signing_secret).toBeUndefined();
    expect(afterRotation.text).not.toContain(secret.slice(6));
  });
});

describe('rotating secrets', () => {
  it('replays a rotation with its secret only to the rotating key and only while that secret is current', async () => {
    const { team, tenantId } = await setup('rotate-replay');
    const otherKey = await h.services.teams.createKey(team.teamId);
    const created = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const id = created.json.id as string;
    const idempotencyKey = uniqueKey();
    const rotate = (key: string) =>
      h.request('POST', `/endpoints/${id}/rotate_secret`, {
        key,
        idempotencyKey,
        ifMatch: created.headers.get('etag')!,
        body: { overlap_seconds: 0 },
      });
    const first = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: otherKey.secret,
      idempotencyKey,
      ifMatch: created.headers.get('etag')!,
      body: { overlap_seconds: 0 },
    });
    expect(first.status).toBe(200);
    const replayed = await rotate(otherKey.secret);
    expect(replayed.headers.get('idempotency-replayed')).toBe('true');
    expect(replayed.json.signing_secret).toBe(first.json.signing_secret);
    const byCreator = await rotate(team.key);
    expect(byCreator.headers.get('idempotency-replayed')).toBe('true');
    expect(byCreator.json.signing_secret).toBeUndefined();
    await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: first.headers.get('etag')!,
      body: { overlap_seconds: 0 },
    });
    const stale = await rotate(otherKey.secret);
    expect(stale.json.signing_secret).toBeUndefined();
    expect(stale.json.secret_version).toBe(2);
  });

  it('signs with both secrets during the overlap, refuses a second rotation then, and 0 retires old secrets', async () => {
    const { team, tenantId } = await setup('rotate');
    const created = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const id = created.json.id as string;
    const first = created.json.signing_secret as string;
    const rotated = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: created.headers.get('etag')!,
      body: {},
    });
    expect(rotated.status).toBe(200);
    const second = rotated.json.signing_secret as string;
    expect(second).not.toBe(first);
    expect(rotated.json.secret_version).toBe(2);
    expect(rotated.json.old_secret_expires_at).toBe(new Date(h.clock.now().getTime() + 86_400 * SECOND).toISOString());
    const entity = await h.services.endpoints.getEndpointEntity({ actor: team }, id);
    const during = await h.services.endpoints.credentials.forDelivery(h.services.db.manager, entity);
    expect(during.signingSecrets).toEqual([second, first]);
    // Both secrets verify with the stock Standard Webhooks library, each on its own.
    for (const secret of during.signingSecrets) {
      const payload = '{"a":1}';
      const headers = { 'webhook-id': 'wdm_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
      const signature = new Webhook(secret).sign(
        'wdm_1',
        new Date(Number(headers['webhook-timestamp']) * 1000),
        payload,
      );
      expect(new Webhook(secret).verify(payload, { ...headers, 'webhook-signature': signature })).toEqual({ a: 1 });
    }
    const again = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: rotated.headers.get('etag')!,
      body: { overlap_seconds: 60 },
    });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('invalid_state');
    const retire = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: rotated.headers.get('etag')!,
      body: { overlap_seconds: 0 },
    });
    expect(retire.status).toBe(200);
    expect(retire.json).toMatchObject({ secret_version: 3, old_secret_expires_at: null });
    const after = await h.services.endpoints.credentials.forDelivery(
      h.services.db.manager,
      await h.services.endpoints.getEndpointEntity({ actor: team }, id),
    );
    expect(after.signingSecrets).toEqual([retire.json.signing_secret]);
  });

  it('ends the overlap when its time is up, after which a rotation with overlap is allowed', async () => {
    const { team, tenantId } = await setup('overlap-end');
    const created = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const id = created.json.id as string;
    const rotated = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: created.headers.get('etag')!,
      body: { overlap_seconds: 3600 },
    });
    h.clock.advance(3600 * SECOND + 1);
    const read = await h.request('GET', `/endpoints/${id}`, { key: team.key });
    expect(read.json.old_secret_expires_at).toBeNull();
    const secrets = await h.services.endpoints.credentials.forDelivery(
      h.services.db.manager,
      await h.services.endpoints.getEndpointEntity({ actor: team }, id),
    );
    expect(secrets.signingSecrets).toEqual([rotated.json.signing_secret]);
    const next = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: rotated.headers.get('etag')!,
      body: { overlap_seconds: 86_400 },
    });
    expect(next.status).toBe(200);
    for (const bad of [-1, 86_401, 1.5, '10']) {
      const response = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
        key: team.key,
        idempotencyKey: uniqueKey(),
        ifMatch: next.headers.get('etag')!,
        body: { overlap_seconds: bad },
      });
      expect(response.json.error).toMatchObject({ code: 'invalid_field', field: 'overlap_seconds' });
    }
    const noIfMatch = await h.request('POST', `/endpoints/${id}/rotate_secret`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      body: {},
    });
    expect(noIfMatch.status).toBe(428);
  });
});

describe('patching endpoints', () => {
  it('replaces arrays and objects in full, clears with null, keeps the version when nothing changes', async () => {
    const { team, tenantId } = await setup('patch');
    const created = await createEndpoint(team, {
      tenant_id: tenantId,
      url: RECEIVER,
      events: ['a.b', 'c.*'],
      metadata: { x: '1' },
      filter: { all: [{ path: '/a', op: 'exists', value: true }] },
      transform: { fields: [{ name: 'a', from: '/a' }] },
      authorization: 'Bearer x',
    });
    const id = created.json.id as string;
    const patched = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: created.headers.get('etag')!,
      body: { events: ['d.e'], metadata: { y: '2' }, filter: null, transform: null, authorization: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({
      events: ['d.e'],
      metadata: { y: '2' },
      filter: null,
      transform: null,
      has_authorization: false,
      transform_version: '2',
      version: '2',
    });
    const same = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: patched.headers.get('etag')!,
      body: { events: ['d.e'], metadata: { y: '2' }, filter: null, authorization: null, headers: {} },
    });
    expect(same.json.version).toBe('2');
    const immutable = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: patched.headers.get('etag')!,
      body: { tenant_id: tenantId },
    });
    expect(immutable.json.error).toMatchObject({ code: 'invalid_field', field: 'tenant_id' });
  });

  it('needs authorization and headers with a URL on a new host; a new URL resets health and moves url_revision', async () => {
    const { team, tenantId } = await setup('host');
    const created = await createEndpoint(team, {
      tenant_id: tenantId,
      url: RECEIVER,
      authorization: 'Bearer old',
      headers: { 'X-K': 'v' },
    });
    const id = created.json.id as string;
    const etag = created.headers.get('etag')!;
    const noCredentials = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: etag,
      body: { url: 'https://other.example.net/hook' },
    });
    expect(noCredentials.json.error).toMatchObject({ code: 'invalid_field', field: 'authorization' });
    const noHeaders = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: etag,
      body: { url: 'https://other.example.net/hook', authorization: null },
    });
    expect(noHeaders.json.error).toMatchObject({ code: 'invalid_field', field: 'headers' });
    await h.services.db.query(
      `UPDATE endpoint_health SET consecutive_failures = 4, circuit = 'open', last_failure_at = now() WHERE endpoint_id = $1`,
      [id],
    );
    const moved = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: etag,
      body: { url: 'https://other.example.net/hook', authorization: null, headers: {} },
    });
    expect(moved.status).toBe(200);
    expect(moved.json).toMatchObject({
      url: 'https://other.example.net/hook',
      url_revision: '2',
      has_authorization: false,
      headers: [],
      health: { circuit: 'closed', consecutive_failures: 0, last_failure_at: null },
    });
    const sameHost = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: moved.headers.get('etag')!,
      body: { url: 'https://other.example.net/hook?v=2' },
    });
    expect(sameHost.status).toBe(200);
    expect(sameHost.json.url_revision).toBe('3');
    const unsafe = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: sameHost.headers.get('etag')!,
      body: { url: 'https://10.0.0.1/hook', authorization: null, headers: {} },
    });
    expect(unsafe.json.error).toMatchObject({ code: 'unsafe_url', field: 'url' });
  });

  it('pauses and enables; a service-disabled endpoint refuses enabled (409) and is resumed with resume', async () => {
    const { team, tenantId } = await setup('status');
    const created = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const id = created.json.id as string;
    const paused = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: created.headers.get('etag')!,
      body: { status: 'paused' },
    });
    expect(paused.json.status).toBe('paused');
    const disabledWrite = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: paused.headers.get('etag')!,
      body: { status: 'disabled' },
    });
    expect(disabledWrite.json.error).toMatchObject({ code: 'invalid_field', field: 'status' });
    const notResumable = await h.request('POST', `/endpoints/${id}/resume`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      ifMatch: paused.headers.get('etag')!,
      body: {},
    });
    expect(notResumable.json.error.code).toBe('invalid_state');

    await h.services.db.query(
      `UPDATE endpoints SET status = 'disabled', disabled_reason = 'endpoint_gone', version = version + 1 WHERE id = $1`,
      [id],
    );
    const disabled = await h.request('GET', `/endpoints/${id}`, { key: team.key });
    expect(disabled.json).toMatchObject({ status: 'disabled', disabled_reason: 'endpoint_gone' });
    const enable = await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: disabled.headers.get('etag')!,
      body: { status: 'enabled' },
    });
    expect(enable.status).toBe(409);
    expect(enable.json.error.code).toBe('invalid_state');
    const resumeKey = uniqueKey();
    const resumed = await h.request('POST', `/endpoints/${id}/resume`, {
      key: team.key,
      idempotencyKey: resumeKey,
      ifMatch: disabled.headers.get('etag')!,
      body: {},
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json).toMatchObject({ status: 'enabled', disabled_reason: null, health: { circuit: 'half_open' } });
    expect(resumed.json.health.next_probe_at).not.toBeNull();
    const replay = await h.request('POST', `/endpoints/${id}/resume`, {
      key: team.key,
      idempotencyKey: resumeKey,
      ifMatch: disabled.headers.get('etag')!,
      body: {},
    });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json).toEqual({ id, status: 'enabled' });
    const missingIfMatch = await h.request('POST', `/endpoints/${id}/resume`, {
      key: team.key,
      idempotencyKey: uniqueKey(),
      body: {},
    });
    expect(missingIfMatch.status).toBe(428);
  });

  it('resume re-checks the URL (422 unsafe_url) and resumes an open circuit', async () => {
    const strict = await startHarness({ strictUrls: true });
    try {
      const team = await strict.newTeam('resume');
      const tenant = await post(strict, '/tenants', { external_id: 'r', name: 'R' }, { key: team.key });
      const created = await post(strict, '/endpoints', { tenant_id: tenant.json.id, url: RECEIVER }, { key: team.key });
      const id = created.json.id as string;
      await strict.services.db.query(`UPDATE endpoint_health SET circuit = 'open' WHERE endpoint_id = $1`, [id]);
      let current = await strict.request('GET', `/endpoints/${id}`, { key: team.key });
      const resumed = await post(
        strict,
        `/endpoints/${id}/resume`,
        {},
        { key: team.key, ifMatch: current.headers.get('etag')! },
      );
      expect(resumed.json.health.circuit).toBe('half_open');
      // The receiver's URL has become unsafe since it was accepted (a policy change or a re-pointed name).
      await strict.services.db.query(
        `UPDATE endpoints SET status = 'disabled', url = 'https://127.0.0.1/x', version = version + 1 WHERE id = $1`,
        [id],
      );
      current = await strict.request('GET', `/endpoints/${id}`, { key: team.key });
      const refused = await post(
        strict,
        `/endpoints/${id}/resume`,
        {},
        { key: team.key, ifMatch: current.headers.get('etag')! },
      );
      expect(refused.status).toBe(422);
      expect(refused.json.error).toMatchObject({ code: 'unsafe_url', field: 'url' });
    } finally {
      await strict.close();
    }
  });
});

describe('deleting endpoints', () => {
  it('answers 204; the endpoint is gone from reads and lists; a tenant deletion deletes its endpoints', async () => {
    const { team, tenantId } = await setup('delete');
    const a = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const b = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const deleted = await h.request('DELETE', `/endpoints/${a.json.id}`, {
      key: team.key,
      ifMatch: a.headers.get('etag')!,
    });
    expect(deleted.status).toBe(204);
    expect((await h.request('GET', `/endpoints/${a.json.id}`, { key: team.key })).status).toBe(404);
    expect(
      (await h.request('GET', '/endpoints', { key: team.key })).json.data.map((e: { id: string }) => e.id),
    ).toEqual([b.json.id]);
    const tenant = await h.request('GET', `/tenants/${tenantId}`, { key: team.key });
    await h.request('DELETE', `/tenants/${tenantId}`, { key: team.key, ifMatch: tenant.headers.get('etag')! });
    expect((await h.request('GET', `/endpoints/${b.json.id}`, { key: team.key })).status).toBe(404);
    const other = await h.newTeam('delete-other');
    expect(
      (await h.request('DELETE', `/endpoints/${b.json.id}`, { key: other.key, ifMatch: b.headers.get('etag')! }))
        .status,
    ).toBe(404);
  });

  it('filters the list by status and pages it', async () => {
    const { team, tenantId } = await setup('list');
    const a = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER, status: 'paused' });
    const paused = await h.request('GET', '/endpoints?status=paused', { key: team.key });
    expect(paused.json.data).toHaveLength(1);
    const page = await h.request('GET', '/endpoints?limit=1', { key: team.key });
    expect(page.json.data[0].id).toBe(a.json.id);
    const next = await h.request('GET', `/endpoints?limit=1&cursor=${page.json.next_cursor}`, { key: team.key });
    expect(next.json.data).toHaveLength(1);
    const wrongFilter = await h.request('GET', `/endpoints?limit=1&status=enabled&cursor=${page.json.next_cursor}`, {
      key: team.key,
    });
    expect(wrongFilter.json.error.code).toBe('invalid_cursor');
    const badStatus = await h.request('GET', '/endpoints?status=gone', { key: team.key });
    expect(badStatus.json.error).toMatchObject({ code: 'invalid_field', field: 'status' });
  });
});

describe('POST /previews', () => {
  it('evaluates patterns, filter and transform without sending or charging, and needs no Idempotency-Key', async () => {
    const { team, tenantId } = await setup('preview');
    const created = await createEndpoint(team, {
      tenant_id: tenantId,
      url: RECEIVER,
      events: ['invoice.*'],
      filter: { all: [{ path: '/amount', op: 'gte', value: 1000 }] },
      transform: {
        fields: [
          { name: 'total', from: '/amount', required: true },
          { name: 'kind', value: 'invoice' },
        ],
      },
    });
    const id = created.json.id as string;
    const match = await h.request('POST', '/previews', {
      key: team.key,
      body: `{"endpoint_id":"${id}","event_type":"invoice.paid","payload":{ "amount": 1.0e3, "note": "x" }}`,
      raw: true,
    });
    expect(match.status).toBe(200);
    expect(match.json).toMatchObject({
      endpoint_id: id,
      matches: true,
      reason: null,
      event_type_matched: true,
      filter_matched: true,
      transform_applied: true,
      transform_error: null,
      content_type: 'application/json',
      body_bytes: 32,
      delivery_units: 1,
    });
    expect(match.text).toContain('"body":{"kind":"invoice","total":1.0e3}');

    const wrongType = await h.request('POST', '/previews', {
      key: team.key,
      body: { endpoint_id: id, event_type: 'order.paid', payload: { amount: 5000 } },
    });
    expect(wrongType.json).toMatchObject({
      matches: false,
      reason: 'event_type_not_subscribed',
      event_type_matched: false,
    });
    const small = await h.request('POST', '/previews', {
      key: team.key,
      body: { endpoint_id: id, payload: { amount: 999.99 } },
    });
    expect(small.json).toMatchObject({
      matches: false,
      reason: 'filter_not_matched',
      event_type_matched: null,
      filter_matched: false,
    });
    const failing = await h.request('POST', '/previews', {
      key: team.key,
      body: { endpoint_id: id, payload: { amountless: true } },
    });
    expect(failing.json).toMatchObject({ matches: false, reason: 'filter_not_matched' });
    await h.request('PATCH', `/endpoints/${id}`, {
      key: team.key,
      ifMatch: created.headers.get('etag')!,
      body: { filter: null },
    });
    const transformFails = await h.request('POST', '/previews', {
      key: team.key,
      body: { endpoint_id: id, payload: { amountless: true } },
    });
    expect(transformFails.json).toMatchObject({
      matches: false,
      reason: 'transform_failed',
      body: null,
      transform_error: { field: 'total' },
    });

    const plain = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const exact = await h.request('POST', '/previews', {
      key: team.key,
      body: `{"endpoint_id":"${plain.json.id}","payload": {"b" : [1.50, "\\u00e9"], "a": null} }`,
      raw: true,
    });
    expect(exact.text).toContain('"body":{"b":[1.50,"\\u00e9"],"a":null}');
    const charges = await h.services.db.query('SELECT count(*)::int AS n FROM charges WHERE team_id = $1', [
      team.teamId,
    ]);
    expect(charges[0].n).toBe(0);
  });

  it("answers 404 for another team's endpoint and 422 for a missing payload", async () => {
    const { team, tenantId } = await setup('preview-errors');
    const created = await createEndpoint(team, { tenant_id: tenantId, url: RECEIVER });
    const other = await h.newTeam('preview-intruder');
    const foreign = await h.request('POST', '/previews', {
      key: other.key,
      body: { endpoint_id: created.json.id, payload: {} },
    });
    expect(foreign.status).toBe(404);
    const missing = await h.request('POST', '/previews', { key: team.key, body: { endpoint_id: created.json.id } });
    expect(missing.json.error).toMatchObject({ code: 'invalid_field', field: 'payload' });
    const nullPayload = await h.request('POST', '/previews', {
      key: team.key,
      body: { endpoint_id: created.json.id, payload: null },
    });
    expect(nullPayload.json).toMatchObject({ matches: true });
    expect(nullPayload.text).toContain('"body":null');
  });
});

describe('secrets outside the moments the spec allows', () => {
  it('never appear in logs-facing errors, lists, or GraphQL', async () => {
    const { team, tenantId } = await setup('leak');
    const created = await createEndpoint(team, {
      tenant_id: tenantId,
      url: RECEIVER,
      authorization: 'Bearer leak-check',
    });
    const secretBody = (created.json.signing_secret as string).slice(6);
    const graphql = await fetch(`${h.rootUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${team.key}` },
      body: JSON.stringify({
        query: `{ endpoints(tenantId: "${tenantId}") { nodes { id headers hasAuthorization } } }`,
      }),
    });
    const text = await graphql.text();
    expect(text).toContain(created.json.id);
    expect(text).not.toContain(secretBody);
    expect(text).not.toContain('leak-check');
    h.clock.advance(DAY);
  });
});
