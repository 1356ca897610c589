import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, type Harness, type TestTeam } from '../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function setup(name: string): Promise<{ team: TestTeam; tenantId: string }> {
  const team = await h.newTeam(name);
  const tenant = await post(h, '/tenants', { external_id: `t-${name}`, name: 'Tenant' }, { key: team.key });
  expect(tenant.status).toBe(201);
  return { team, tenantId: tenant.json.id };
}

/** The members of a push endpoint's answer, in order, as they were before stream endpoints existed. */
const PUSH_MEMBERS = [
  'id',
  'tenant_id',
  'url',
  'name',
  'description',
  'events',
  'filter',
  'transform',
  'transform_version',
  'status',
  'disabled_reason',
  'rate_per_second',
  'max_concurrency',
  'retry_delays_seconds',
  'timeout_seconds',
  'headers',
  'has_authorization',
  'metadata',
  'secret_version',
  'old_secret_expires_at',
  'health',
  'queued_count',
  'url_revision',
  'version',
  'created_at',
  'updated_at',
];

describe('delivery_mode', () => {
  it('leaves a push endpoint answer as it was, explicit push or not', async () => {
    const { team, tenantId } = await setup('push-mode');
    const implicit = await post(
      h,
      '/endpoints',
      { tenant_id: tenantId, url: 'https://a.example.com/h' },
      { key: team.key },
    );
    const explicit = await post(
      h,
      '/endpoints',
      { tenant_id: tenantId, url: 'https://a.example.com/h', delivery_mode: 'push' },
      { key: team.key },
    );
    for (const created of [implicit, explicit]) {
      expect(created.status).toBe(201);
      expect(Object.keys(created.json)).toEqual([...PUSH_MEMBERS, 'signing_secret']);
      const read = await h.request('GET', `/endpoints/${created.json.id}`, { key: team.key });
      expect(Object.keys(read.json)).toEqual(PUSH_MEMBERS);
      expect(read.text).not.toContain('delivery_mode');
    }
  });

  it('creates a stream endpoint without a URL and refuses a URL, a missing URL for push, and changing the mode', async () => {
    const { team, tenantId } = await setup('stream-mode');
    const created = await post(h, '/endpoints', { tenant_id: tenantId, delivery_mode: 'stream' }, { key: team.key });
    expect(created.status).toBe(201);
    expect(created.json.delivery_mode).toBe('stream');
    expect(created.json).not.toHaveProperty('url');
    expect(Object.keys(created.json).slice(0, 3)).toEqual(['id', 'tenant_id', 'delivery_mode']);
    expect(created.json.signing_secret).toMatch(/^whsec_/);
    const read = await h.request('GET', `/endpoints/${created.json.id}`, { key: team.key });
    expect(read.json.delivery_mode).toBe('stream');
    expect(read.json).not.toHaveProperty('url');

    const withUrl = await post(
      h,
      '/endpoints',
      { tenant_id: tenantId, delivery_mode: 'stream', url: 'https://a.example.com/h' },
      { key: team.key },
    );
    expect(withUrl.status).toBe(422);
    expect(withUrl.json.error).toMatchObject({ code: 'invalid_field', field: 'url' });
    const pushWithoutUrl = await post(h, '/endpoints', { tenant_id: tenantId }, { key: team.key });
    expect(pushWithoutUrl.status).toBe(422);
    expect(pushWithoutUrl.json.error).toMatchObject({ code: 'invalid_field', field: 'url' });
    const badMode = await post(h, '/endpoints', { tenant_id: tenantId, delivery_mode: 'poll' }, { key: team.key });
    expect(badMode.status).toBe(422);
    expect(badMode.json.error).toMatchObject({ code: 'invalid_field', field: 'delivery_mode' });

    const etag = read.headers.get('etag')!;
    const patchMode = await h.request('PATCH', `/endpoints/${created.json.id}`, {
      key: team.key,
      ifMatch: etag,
      body: { delivery_mode: 'push' },
    });
    expect(patchMode.status).toBe(422);
    expect(patchMode.json.error).toMatchObject({ code: 'invalid_field', field: 'delivery_mode' });
    const patchUrl = await h.request('PATCH', `/endpoints/${created.json.id}`, {
      key: team.key,
      ifMatch: etag,
      body: { url: 'https://a.example.com/h' },
    });
    expect(patchUrl.status).toBe(422);
    expect(patchUrl.json.error).toMatchObject({ code: 'invalid_field', field: 'url' });
    const patchName = await h.request('PATCH', `/endpoints/${created.json.id}`, {
      key: team.key,
      ifMatch: etag,
      body: { name: 'laptop stream' },
    });
    expect(patchName.status).toBe(200);
    expect(patchName.json).toMatchObject({ name: 'laptop stream', delivery_mode: 'stream' });
  });
});

describe('stream tokens', () => {
  it('are shown once, stored hashed, listed without their value and revoked', async () => {
    const { team, tenantId } = await setup('tokens');
    const endpoint = await post(h, '/endpoints', { tenant_id: tenantId, delivery_mode: 'stream' }, { key: team.key });
    const created = await post(
      h,
      `/endpoints/${endpoint.json.id}/stream-tokens`,
      { name: 'laptop' },
      { key: team.key },
    );
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^wdk_/),
      name: 'laptop',
      created_at: expect.any(String),
      last_used_at: null,
      token: expect.stringMatching(/^whst_[A-Za-z0-9_-]{43}$/),
    });
    const stored = (await h.services.db.query(`SELECT token_sha256 FROM stream_tokens WHERE id = $1`, [
      created.json.id,
    ])) as { token_sha256: Buffer }[];
    expect(stored[0]!.token_sha256).toHaveLength(32);
    expect(stored[0]!.token_sha256.toString('latin1')).not.toContain(created.json.token);

    const listed = await h.request('GET', `/endpoints/${endpoint.json.id}/stream-tokens`, { key: team.key });
    expect(listed.status).toBe(200);
    expect(listed.json.data).toEqual([
      { id: created.json.id, name: 'laptop', created_at: created.json.created_at, last_used_at: null },
    ]);
    expect(listed.text).not.toContain(created.json.token);
    expect(await h.services.streamTokens.authenticate(endpoint.json.id, created.json.token)).toMatchObject({
      tokenId: created.json.id,
    });

    const revoked = await h.request('DELETE', `/endpoints/${endpoint.json.id}/stream-tokens/${created.json.id}`, {
      key: team.key,
    });
    expect(revoked.status).toBe(204);
    expect(await h.services.streamTokens.authenticate(endpoint.json.id, created.json.token)).toBeNull();
    const again = await h.request('DELETE', `/endpoints/${endpoint.json.id}/stream-tokens/${created.json.id}`, {
      key: team.key,
    });
    expect(again.status).toBe(404);
    const afterRevoke = await h.request('GET', `/endpoints/${endpoint.json.id}/stream-tokens`, { key: team.key });
    expect(afterRevoke.json.data).toEqual([]);
  });

  it('belong to stream endpoints of the team only', async () => {
    const { team, tenantId } = await setup('tokens-push');
    const push = await post(
      h,
      '/endpoints',
      { tenant_id: tenantId, url: 'https://a.example.com/h' },
      { key: team.key },
    );
    const refused = await post(h, `/endpoints/${push.json.id}/stream-tokens`, {}, { key: team.key });
    const none = await h.request('GET', `/endpoints/${push.json.id}/stream-tokens`, { key: team.key });
    expect(none.json).toEqual({ data: [], next_cursor: null });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('invalid_state');
    const stream = await post(h, '/endpoints', { tenant_id: tenantId, delivery_mode: 'stream' }, { key: team.key });
    const other = await h.newTeam('tokens-other');
    const foreign = await post(h, `/endpoints/${stream.json.id}/stream-tokens`, {}, { key: other.key });
    expect(foreign.status).toBe(404);
    const token = await post(h, `/endpoints/${stream.json.id}/stream-tokens`, {}, { key: team.key });
    // A token opens only its own endpoint.
    expect(await h.services.streamTokens.authenticate(push.json.id, token.json.token)).toBeNull();
    const connections = await h.request('GET', `/endpoints/${stream.json.id}/stream-connections`, { key: team.key });
    expect(connections.json).toEqual({ data: [] });
  });
});
