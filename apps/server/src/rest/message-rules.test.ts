import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_SLOTS } from '@svc/core';
import { startHarness, post, uniqueKey, type Harness, type TestTeam } from '../testing/harness.js';

// Small limits so the rules are reached quickly; everything else as the spec says.
let h: Harness;
let team: TestTeam;
let tenantId: string;

async function endpoint(body: Record<string, unknown>): Promise<string> {
  const r = await post(h, '/endpoints', { url: 'https://example.com/hook', tenant_id: tenantId, ...body });
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}

const message = (body: Record<string, unknown>, t: TestTeam = team) =>
  post(h, '/messages', { tenant_id: tenantId, event_type: 'rule.checked', ...body }, { key: t.key });

beforeAll(async () => {
  h = await startHarness({ limits: { max_pending_deliveries: 6, max_transformed_bytes_per_message: 300_000 } });
  team = h.team;
  await h.services.teams.setPaymentCard(team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'rules', name: 'Rules' })).json.id;
  await post(h, '/event_types', { name: 'rule.checked' });
});
afterAll(async () => {
  await h.close();
});

describe('POST /messages body rules', () => {
  it('takes exactly one of payload and body_base64, and body_base64 needs a content_type', async () => {
    expect((await message({})).json.error).toMatchObject({ code: 'invalid_field', field: 'payload' });
    const both = await message({ payload: 1, body_base64: 'AA==', content_type: 'text/plain' });
    expect(both.json.error).toMatchObject({ code: 'invalid_field' });
    const noType = await message({ body_base64: 'aGk=' });
    expect(noType.json.error).toMatchObject({ code: 'invalid_field', field: 'content_type' });
  });

  it('accepts the four content types, charset=utf-8 only on textual ones, and keeps base64 bytes exactly', async () => {
    const bytes = Buffer.from([0, 255, 1, 128]);
    const binary = await message({ body_base64: bytes.toString('base64'), content_type: 'application/octet-stream' });
    expect(binary.status, binary.text).toBe(202);
    const stored = await h.services.db.query('SELECT body FROM message_contents WHERE message_id = $1', [
      binary.json.id,
    ]);
    expect(Buffer.compare(stored[0].body, bytes)).toBe(0);
    const text = await message({ body_base64: 'aGk=', content_type: 'text/plain; charset=utf-8' });
    expect(text.status).toBe(202);
    expect(text.json.content_type).toBe('text/plain; charset=utf-8');
    const form = await message({ body_base64: 'YT0x', content_type: 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(202);
    const binaryCharset = await message({
      body_base64: 'AA==',
      content_type: 'application/octet-stream; charset=utf-8',
    });
    expect(binaryCharset.json.error).toMatchObject({ code: 'invalid_field', field: 'content_type' });
    const other = await message({ body_base64: 'AA==', content_type: 'image/png' });
    expect(other.json.error).toMatchObject({ code: 'invalid_field', field: 'content_type' });
    const payloadAsText = await message({ payload: 'x', content_type: 'text/plain' });
    expect(payloadAsText.json.error).toMatchObject({ code: 'invalid_field', field: 'content_type' });
    const badBase64 = await message({ body_base64: 'abc', content_type: 'text/plain' });
    expect(badBase64.json.error).toMatchObject({ code: 'invalid_field', field: 'body_base64' });
  });

  it('refuses a decoded body over 1 MiB with 413 body_too_large', async () => {
    const big = Buffer.alloc(1_048_577, 7).toString('base64');
    // The base64 text itself is over 1 MiB: the request body limit answers first, with the same error.
    const r = await message({ body_base64: big, content_type: 'application/octet-stream' });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('body_too_large');
  });

  it('schedules with deliver_at (at most 7 days ahead) and expires_at (after it, at most 72 hours later)', async () => {
    const now = h.clock.now().getTime();
    const at = (ms: number) => new Date(now + ms).toISOString();
    const day = 86_400_000;
    const scheduled = await message({ payload: {}, deliver_at: at(day) });
    expect(scheduled.status).toBe(202);
    expect(scheduled.json.deliver_at).toBe(at(day));
    expect(scheduled.json.expires_at).toBe(at(day + 3 * day));
    expect((await message({ payload: {}, deliver_at: at(7 * day + 1000) })).json.error).toMatchObject({
      field: 'deliver_at',
    });
    expect((await message({ payload: {}, expires_at: at(-1000) })).json.error).toMatchObject({ field: 'expires_at' });
    expect((await message({ payload: {}, expires_at: at(3 * day + 1000) })).json.error).toMatchObject({
      field: 'expires_at',
    });
    const short = await message({ payload: {}, expires_at: at(60_000) });
    expect(short.json.expires_at).toBe(at(60_000));
    expect((await message({ payload: {}, deliver_at: 'tomorrow' })).json.error).toMatchObject({ field: 'deliver_at' });
  });
});

describe('matching', () => {
  it('endpoint_ids: filters still apply; a disabled, deleted or foreign endpoint rejects the request', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'picks', name: 'Picks' });
    const own = async (body: Record<string, unknown> = {}) => {
      const r = await post(h, '/endpoints', { url: 'https://example.com/p', tenant_id: tenant.json.id, ...body });
      return r.json.id as string;
    };
    const a = await own();
    const filtered = await own({ filter: { all: [{ path: '/kind', op: 'eq', value: 'b' }] } });
    const deleted = await own();
    const etag = (await h.request('GET', `/endpoints/${deleted}`)).headers.get('etag')!;
    await h.request('DELETE', `/endpoints/${deleted}`, { ifMatch: etag });
    const send = (ids: string[], t = tenant.json.id as string) =>
      post(h, '/messages', { tenant_id: t, event_type: 'rule.checked', payload: { kind: 'a' }, endpoint_ids: ids });
    const picked = await send([a, filtered]);
    expect(picked.status).toBe(202);
    const rows = await h.services.db.query('SELECT endpoint_id FROM deliveries WHERE message_id = $1', [
      picked.json.id,
    ]);
    expect(rows).toEqual([{ endpoint_id: a }]);
    expect((await send([deleted])).json.error).toMatchObject({ code: 'invalid_field', resource_id: deleted });
    const foreign = await endpoint({});
    expect((await send([foreign])).json.error).toMatchObject({ code: 'invalid_field', resource_id: foreign });
    expect((await send(['wde_nope'])).json.error).toMatchObject({ field: 'endpoint_ids' });
    await h.services.db.query(`UPDATE endpoints SET status = 'disabled' WHERE id = $1`, [a]);
    expect((await send([a])).json.error).toMatchObject({ code: 'invalid_field', resource_id: a });
  });

  it('a failing transform refuses the whole message with transform_failed and stores nothing', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'xf', name: 'Xf' });
    const failing = await post(h, '/endpoints', {
      url: 'https://example.com/x',
      tenant_id: tenant.json.id,
      transform: { fields: [{ name: 'id', from: '/missing', required: true }] },
    });
    const before = await h.services.db.query('SELECT count(*)::int AS n FROM messages');
    const r = await post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'rule.checked', payload: { a: 1 } });
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: 'transform_failed', resource_id: failing.json.id });
    expect((await h.services.db.query('SELECT count(*)::int AS n FROM messages'))[0].n).toBe(before[0].n);
  });

  it('transforms at acceptance: the delivery keeps the transformed bytes, priced by their size', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'xf2', name: 'Xf2' });
    await post(h, '/endpoints', {
      url: 'https://example.com/x',
      tenant_id: tenant.json.id,
      transform: {
        fields: [
          { name: 'z', from: '/a' },
          { name: 'k', value: true },
        ],
      },
    });
    const r = await h.request('POST', '/messages', {
      idempotencyKey: uniqueKey(),
      raw: true,
      body: `{"tenant_id":"${tenant.json.id}","event_type":"rule.checked","payload":{"a": [1.50, "x" ], "b": 2}}`,
    });
    expect(r.status, r.text).toBe(202);
    const rows = await h.services.db.query('SELECT body FROM deliveries WHERE message_id = $1', [r.json.id]);
    expect(rows[0].body.toString()).toBe('{"k":true,"z":[1.50,"x"]}');
  });

  it('refuses more than 8 MiB (here: the lowered limit) of bodies for all endpoints with invalid_field', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'wide', name: 'Wide' });
    for (let i = 0; i < 3; i += 1)
      await post(h, '/endpoints', { url: `https://example.com/${i}`, tenant_id: tenant.json.id });
    const payload = { blob: 'x'.repeat(110_000) };
    const r = await post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'rule.checked', payload });
    expect(r.status).toBe(422);
    // Without endpoint_ids the field to change is the body, not the tenant.
    expect(r.json.error).toMatchObject({ code: 'invalid_field', field: 'payload' });
    const raw = await post(h, '/messages', {
      tenant_id: tenant.json.id,
      event_type: 'rule.checked',
      body_base64: Buffer.from(JSON.stringify(payload)).toString('base64'),
      content_type: 'application/json',
    });
    expect(raw.json.error).toMatchObject({ code: 'invalid_field', field: 'body_base64' });
    const endpoints = await h.services.db.query('SELECT id FROM endpoints WHERE tenant_id = $1', [tenant.json.id]);
    const listed = await post(h, '/messages', {
      tenant_id: tenant.json.id,
      event_type: 'rule.checked',
      payload,
      endpoint_ids: endpoints.map((e: { id: string }) => e.id),
    });
    expect(listed.json.error).toMatchObject({ code: 'invalid_field', field: 'endpoint_ids' });
  });
});

describe('back-pressure and billing', () => {
  it('answers 429 queue_full at max_pending_deliveries (nothing stored)', async () => {
    const busy = await h.newTeam('busy');
    await h.services.teams.setPaymentCard(busy.teamId, true);
    const tenant = await post(h, '/tenants', { external_id: 'busy', name: 'Busy' }, { key: busy.key });
    await post(h, '/event_types', { name: 'rule.checked' }, { key: busy.key });
    for (let i = 0; i < 3; i += 1)
      await post(h, '/endpoints', { url: `https://example.com/${i}`, tenant_id: tenant.json.id }, { key: busy.key });
    const send = () =>
      post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'rule.checked', payload: 1 }, { key: busy.key });
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(202);
    const full = await send();
    expect(full.status).toBe(429);
    expect(full.json.error.code).toBe('queue_full');
  });

  it(`answers 429 too_many_concurrent_requests with Retry-After while ${ADMISSION_SLOTS} messages of the team are being stored`, async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = h.services.db.transaction(async (tx) => {
      for (let slot = 0; slot < ADMISSION_SLOTS; slot += 1)
        await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('admission:' || $1, $2))`, [team.teamId, slot]);
      locked();
      await held;
    });
    await isLocked;
    try {
      const r = await message({ payload: 1 });
      expect(r.status).toBe(429);
      expect(r.json.error.code).toBe('too_many_concurrent_requests');
      expect(r.headers.get('retry-after')).toBe('1');
    } finally {
      release();
      await holder;
    }
    expect((await message({ payload: 1 })).status).toBe(202);
  });

  it("refuses with 402 spending_limit when the charge would pass the key's monthly limit, storing nothing", async () => {
    const capped = await h.newTeam('capped');
    await h.services.teams.setPaymentCard(capped.teamId, true);
    const key = await h.services.teams.createKey(capped.teamId, { spendingLimitMicros: 70n });
    const asKey = { key: key.secret };
    const tenant = await post(h, '/tenants', { external_id: 'c', name: 'C' }, asKey);
    await post(h, '/event_types', { name: 'rule.checked' }, asKey);
    await post(h, '/endpoints', { url: 'https://example.com/c', tenant_id: tenant.json.id }, asKey);
    const send = () =>
      post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'rule.checked', payload: 1 }, asKey);
    expect((await send()).status).toBe(202); // 60 micro-USD
    const refused = await send();
    expect(refused.status).toBe(402);
    expect(refused.json.error.code).toBe('spending_limit');
    const rows = await h.services.db.query('SELECT count(*)::int AS n FROM messages WHERE team_id = $1', [
      capped.teamId,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('limits admissions per team to 100/s with a burst of 200: then 429 rate_limited with Retry-After', async () => {
    const fast = await h.newTeam('fast');
    await h.services.teams.setPaymentCard(fast.teamId, true);
    const tenant = await post(h, '/tenants', { external_id: 'f', name: 'F' }, { key: fast.key });
    await post(h, '/event_types', { name: 'rule.checked' }, { key: fast.key });
    // The harness clock stands still, so no token refills during the loop.
    for (let i = 0; i < 200; i += 1) {
      const r = await post(
        h,
        '/messages',
        { tenant_id: tenant.json.id, event_type: 'rule.checked', payload: i },
        {
          key: fast.key,
        },
      );
      expect(r.status).toBe(202);
    }
    const limited = await post(
      h,
      '/messages',
      { tenant_id: tenant.json.id, event_type: 'rule.checked', payload: 0 },
      {
        key: fast.key,
      },
    );
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Reads have their own bucket.
    expect((await h.request('GET', '/tenants', { key: fast.key })).status).toBe(200);
  });
});
