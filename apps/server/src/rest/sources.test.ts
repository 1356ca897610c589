import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND } from '@svc/core';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness } from '../testing/harness.js';
import { rawPost } from '../testing/raw-post.js';

/**
 * The source resource through REST: validation, quota, reads that never show secrets, PATCH, rotation rules,
 * idempotent replays, tenant deletion; and the receive rules beyond verification: event type mapping, catalog
 * checks, content types, body size, rate limit, billing refusals (webhooks.budget.blocked), the chat challenge.
 */
const PUBLIC_BASE = 'https://hooks.svc.test';
let h: Harness;
let tenantId: string;

beforeAll(async () => {
  h = await startHarness({ publicBaseUrl: PUBLIC_BASE, limits: { max_sources: 40 } });
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'src', name: 'Sources' })).json.id;
  for (const name of ['order.created', 'order.paid', 'vendor.order.paid', 'payment_intent.succeeded'])
    await post(h, '/event_types', { name });
});
afterAll(async () => {
  await h.close();
});

const tokenOf = (receiveUrl: string) => receiveUrl.slice(`${PUBLIC_BASE}/v1/receive/`.length);

async function bearerSource(
  extra: Record<string, unknown> = {},
): Promise<{ id: string; token: string; secret: string; etag: string }> {
  const r = await post(h, '/sources', {
    tenant_id: tenantId,
    name: 'bearer',
    verification: { kind: 'bearer' },
    event_type: 'order.created',
    ...extra,
  });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id, token: tokenOf(r.json.receive_url), secret: r.json.secret, etag: r.headers.get('etag')! };
}

function receive(token: string, body: string | Buffer, headers: Record<string, string>): Promise<ApiResponse> {
  return rawPost(`${h.baseUrl}/receive/${token}`, body, headers);
}

const asBearer = (secret: string, type = 'application/json') => ({
  authorization: `Bearer ${secret}`,
  'content-type': type,
});

async function eventsOf(type: string, resourceId: string): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 50; i += 1) {
    const page = await h.services.events.listEvents(
      { actor: h.team },
      { type: type as never, resource_id: resourceId },
    );
    if (page.data.length > 0) return page.data.map((e) => e.data as Record<string, unknown>);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return [];
}

describe('POST /sources', () => {
  it('creates a source: receive_url and a generated secret once; reads never show them', async () => {
    const r = await post(h, '/sources', {
      tenant_id: tenantId,
      name: 'Orders',
      verification: { kind: 'standard_webhooks' },
      event_type: 'order.created',
      metadata: { team: 'billing' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      tenant_id: tenantId,
      name: 'Orders',
      verification: { kind: 'standard_webhooks' },
      event_type: 'order.created',
      event_type_path: null,
      billing_key_id: h.team.keyId,
      status: 'active',
      secret_rotation_ends_at: null,
      token_rotation_ends_at: null,
      metadata: { team: 'billing' },
      version: '1',
    });
    expect(r.json.id).toMatch(/^wds_/);
    expect(r.json.secret).toMatch(/^whsec_/);
    expect(r.json.receive_url).toMatch(new RegExp(`^${PUBLIC_BASE}/v1/receive/rcv_[A-Za-z0-9_-]{43}$`));
    expect(r.headers.get('etag')).toBe(`"wd:${r.json.id}:1"`);
    const read = await h.request('GET', `/sources/${r.json.id}`);
    expect(read.status).toBe(200);
    expect(read.json).not.toHaveProperty('secret');
    expect(read.json).not.toHaveProperty('receive_url');
    expect(read.text).not.toContain(tokenOf(r.json.receive_url));
    expect(read.text).not.toContain(r.json.secret);
    const list = await h.request('GET', `/sources?tenant_id=${tenantId}`);
    expect(list.json.data.map((s: { id: string }) => s.id)).toContain(r.json.id);
    expect(list.text).not.toContain(r.json.secret);
  });

  it('replays an idempotent create with the receive URL and secret only to the key that made it', async () => {
    const key = uniqueKey();
    const body = {
      tenant_id: tenantId,
      name: 'Replayed',
      verification: { kind: 'bearer' },
      event_type: 'order.created',
    };
    const first = await post(h, '/sources', body, { idempotencyKey: key });
    expect(first.status).toBe(201);
    const again = await post(h, '/sources', body, { idempotencyKey: key });
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.json.receive_url).toBe(first.json.receive_url);
    expect(again.json.secret).toBe(first.json.secret);
    const stored = await h.services.db.query(
      `SELECT convert_from(response_body, 'UTF8') AS body FROM idempotency_records WHERE idempotency_key = $1`,
      [key],
    );
    expect(stored[0].body).toContain(first.json.id);
    expect(stored[0].body).not.toContain(tokenOf(first.json.receive_url));
    expect(stored[0].body).not.toContain(first.json.secret);
    // Another key of the team replaying the same request sees neither.
    const second = await h.services.teams.createKey(h.team.teamId);
    const other = await post(h, '/sources', body, { idempotencyKey: key, key: second.secret });
    expect(other.headers.get('idempotency-replayed')).toBe('true');
    expect(other.json.id).toBe(first.json.id);
    expect(other.json).not.toHaveProperty('receive_url');
    expect(other.json).not.toHaveProperty('secret');
  });

  it('refuses bad input with the documented errors', async () => {
    const base = { tenant_id: tenantId, name: 'Bad', event_type: 'order.created' };
    const cases: [Record<string, unknown>, number, string, string?][] = [
      [{ ...base, verification: { kind: 'carrier_pigeon' } }, 422, 'invalid_field', 'verification.kind'],
      [{ ...base, verification: { kind: 'payments' } }, 422, 'invalid_field', 'verification.secret'],
      [
        { ...base, verification: { kind: 'payments', secret: 'not-whsec' } },
        422,
        'invalid_field',
        'verification.secret',
      ],
      [{ ...base, verification: { kind: 'bearer', secret: ' padded ' } }, 422, 'invalid_field', 'verification.secret'],
      [{ ...base, verification: { kind: 'hmac', secret: 'long-enough-secret' } }, 422, 'invalid_field'],
      [{ ...base, verification: { kind: 'bearer' }, event_type: undefined }, 422, 'invalid_field', 'event_type'],
      [
        { ...base, verification: { kind: 'bearer' }, event_type_path: '/type' },
        422,
        'invalid_field',
        'event_type_path',
      ],
      [
        { ...base, verification: { kind: 'bearer' }, event_type: 'never.declared' },
        422,
        'invalid_event_type',
        'event_type',
      ],
      [
        { ...base, verification: { kind: 'bearer' }, tenant_id: 'wdt_00000000000000000000000000' },
        422,
        'invalid_field',
        'tenant_id',
      ],
      [
        { ...base, verification: { kind: 'bearer' }, billing_key_id: 'key_00000000000000000000000000' },
        422,
        'invalid_field',
        'billing_key_id',
      ],
      [
        { ...base, verification: { kind: 'bearer' }, event_type: null, event_type_path: 'type' },
        422,
        'invalid_field',
        'event_type_path',
      ],
    ];
    for (const [body, status, code, field] of cases) {
      const r = await post(h, '/sources', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.error.code, JSON.stringify(body)).toBe(code);
      if (field) expect(r.json.error.field, JSON.stringify(body)).toBe(field);
    }
    // A secret the operator brings for a kind that could generate one is used, and not shown back.
    const brought = await post(h, '/sources', {
      ...base,
      verification: { kind: 'bearer', secret: 'brought-token-0123456789' },
    });
    expect(brought.status, brought.text).toBe(201);
    expect(brought.json).not.toHaveProperty('secret');
    const works = await receive(tokenOf(brought.json.receive_url), '{"b":1}', asBearer('brought-token-0123456789'));
    expect(works.status, works.text).toBe(200);
    const other = await h.newTeam('other-billing');
    const foreignKey = await post(h, '/sources', {
      ...base,
      verification: { kind: 'bearer' },
      billing_key_id: other.keyId,
    });
    expect(foreignKey.status).toBe(422);
    expect(foreignKey.json.error.field).toBe('billing_key_id');
  });

  it('stops at max_sources with 409 quota_exceeded', async () => {
    const team = await h.newTeam('quota');
    const tenant = await post(h, '/tenants', { external_id: 'q', name: 'Q' }, { key: team.key });
    await post(h, '/event_types', { name: 'q.event' }, { key: team.key });
    const create = () =>
      post(
        h,
        '/sources',
        { tenant_id: tenant.json.id, name: 'q', verification: { kind: 'bearer' }, event_type: 'q.event' },
        { key: team.key },
      );
    for (let i = 0; i < 40; i += 1) {
      h.clock.advance(SECOND);
      expect((await create()).status).toBe(201);
    }
    const over = await create();
    expect(over.status).toBe(409);
    expect(over.json.error.code).toBe('quota_exceeded');
  });
});

describe('PATCH, rotation and DELETE', () => {
  it('changes name, mapping, status and settings with If-Match; an unchanged request keeps the version', async () => {
    const source = await bearerSource();
    const same = await h.request('PATCH', `/sources/${source.id}`, { body: { name: 'bearer' }, ifMatch: source.etag });
    expect(same.status).toBe(200);
    expect(same.json.version).toBe('1');
    const changed = await h.request('PATCH', `/sources/${source.id}`, {
      body: { name: 'Renamed', event_type_path: '/type', event_type_prefix: 'vendor.', status: 'paused' },
      ifMatch: source.etag,
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      name: 'Renamed',
      event_type: null,
      event_type_path: '/type',
      event_type_prefix: 'vendor.',
      status: 'paused',
      version: '2',
    });
    const stale = await h.request('PATCH', `/sources/${source.id}`, { body: { name: 'x' }, ifMatch: source.etag });
    expect(stale.status).toBe(412);
    const secret = await h.request('PATCH', `/sources/${source.id}`, {
      body: { verification: { secret: 'x' } },
      ifMatch: changed.headers.get('etag')!,
    });
    expect(secret.status).toBe(422);
    expect(secret.json.error.field).toBe('verification.secret');
    const kind = await h.request('PATCH', `/sources/${source.id}`, {
      body: { verification: { kind: 'hmac' } },
      ifMatch: changed.headers.get('etag')!,
    });
    expect(kind.status).toBe(422);
    expect(kind.json.error.field).toBe('verification.kind');
  });

  it('refuses a second rotation during an overlap (409 invalid_state) unless overlap_seconds is 0', async () => {
    const source = await bearerSource();
    const first = await post(
      h,
      `/sources/${source.id}/rotate_secret`,
      { overlap_seconds: 3600 },
      { ifMatch: source.etag },
    );
    expect(first.status, first.text).toBe(200);
    expect(first.json.secret).not.toBe(source.secret);
    const etag = first.headers.get('etag')!;
    const second = await post(h, `/sources/${source.id}/rotate_secret`, { overlap_seconds: 60 }, { ifMatch: etag });
    expect(second.status).toBe(409);
    expect(second.json.error.code).toBe('invalid_state');
    const now = await post(h, `/sources/${source.id}/rotate_secret`, { overlap_seconds: 0 }, { ifMatch: etag });
    expect(now.status, now.text).toBe(200);
    expect(now.json.secret_rotation_ends_at).toBeNull();
    // Only the newest secret verifies now.
    const old = await receive(source.token, '{"a":1}', asBearer(first.json.secret));
    expect(old.status).toBe(401);
    const current = await receive(source.token, '{"a":2}', asBearer(now.json.secret));
    expect(current.status, current.text).toBe(200);
    const tooLong = await post(
      h,
      `/sources/${source.id}/rotate_token`,
      { overlap_seconds: 86_401 },
      {
        ifMatch: now.headers.get('etag')!,
      },
    );
    expect(tooLong.status).toBe(422);
    expect(tooLong.json.error.field).toBe('overlap_seconds');
  });

  it('deleting a tenant deletes its sources: the receive URL stops answering', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'gone', name: 'Gone' });
    const r = await post(h, '/sources', {
      tenant_id: tenant.json.id,
      name: 'doomed',
      verification: { kind: 'bearer' },
      event_type: 'order.created',
    });
    const token = tokenOf(r.json.receive_url);
    expect((await receive(token, '{"x":1}', asBearer(r.json.secret))).status).toBe(200);
    const deleted = await h.request('DELETE', `/tenants/${tenant.json.id}`, { ifMatch: `"wd:${tenant.json.id}:1"` });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await receive(token, '{"x":2}', asBearer(r.json.secret))).status).toBe(404);
    expect((await h.request('GET', `/sources/${r.json.id}`)).status).toBe(404);
  });
});

describe('POST /receive/{token}', () => {
  it('maps the event type from a JSON pointer or a form field, with the prefix; unmapped or inactive types get 422', async () => {
    const source = await bearerSource({
      event_type: null,
      event_type_path: '/data/type',
      event_type_prefix: 'vendor.',
    });
    const ok = await receive(source.token, '{"data":{"type":"order.paid"}}', asBearer(source.secret));
    expect(ok.status, ok.text).toBe(200);
    const message = await h.request('GET', `/messages/${ok.json.message_id}`);
    expect(message.json.event_type).toBe('vendor.order.paid');
    const missing = await receive(source.token, '{"data":{}}', asBearer(source.secret));
    expect(missing.status).toBe(422);
    expect(missing.json.error.code).toBe('invalid_event_type');
    const unknown = await receive(source.token, '{"data":{"type":"order.lost"}}', asBearer(source.secret));
    expect(unknown.status).toBe(422);
    expect(unknown.json.error.code).toBe('invalid_event_type');

    const form = await bearerSource({ event_type: null, event_type_path: '/event' });
    const captured = await receive(
      form.token,
      'event=order.paid&amount=5',
      asBearer(form.secret, 'application/x-www-form-urlencoded'),
    );
    expect(captured.status, captured.text).toBe(200);
    const formMessage = await h.request('GET', `/messages/${captured.json.message_id}`);
    expect(formMessage.json).toMatchObject({
      event_type: 'order.paid',
      content_type: 'application/x-www-form-urlencoded',
    });
    const content = await h.request('GET', `/messages/${captured.json.message_id}/content`);
    expect(content.text).toBe('event=order.paid&amount=5');
  });

  it('keeps the original bytes (whitespace and key order) and refuses unsupported types and bodies over 1 MiB', async () => {
    const source = await bearerSource();
    const raw = '{ "b" : 1,\n  "a" : [ 1.0 ] }';
    const ok = await receive(source.token, raw, asBearer(source.secret, 'application/json; charset=UTF-8'));
    expect(ok.status, ok.text).toBe(200);
    const content = await h.request('GET', `/messages/${ok.json.message_id}/content`);
    expect(content.text).toBe(raw);
    expect(content.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const xml = await receive(source.token, '<a/>', asBearer(source.secret, 'application/xml'));
    expect(xml.status).toBe(415);
    expect(xml.json.error.code).toBe('unsupported_media_type');
    const big = await receive(source.token, Buffer.alloc(1_048_577, 0x61), asBearer(source.secret, 'text/plain'));
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe('body_too_large');
  });

  it('limits each source to its requests per second with 429 and Retry-After', async () => {
    const source = await bearerSource();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    // The clock stands still: no token refills during the loop (burst 100).
    for (let i = 0; i < 105; i += 1) {
      const r = await receive(source.token, JSON.stringify({ i }), asBearer(source.secret));
      statuses.push(r.status);
      if (r.status === 429) retryAfter = r.headers.get('retry-after');
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    h.clock.advance(2 * SECOND);
    expect((await receive(source.token, '{"after":1}', asBearer(source.secret))).status).toBe(200);
  });

  it('refuses a capture its billing key cannot pay with 402, stores nothing and emits webhooks.budget.blocked', async () => {
    const capped = await h.services.teams.createKey(h.team.teamId, { spendingLimitMicros: 1n });
    const source = await bearerSource({ billing_key_id: capped.keyId });
    const r = await receive(source.token, '{"n":1}', asBearer(source.secret));
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('spending_limit');
    const stored = await h.services.db.query('SELECT count(*)::int AS n FROM messages WHERE source_id = $1', [
      source.id,
    ]);
    expect(stored[0].n).toBe(0);
    const events = await eventsOf('webhooks.budget.blocked', source.id);
    expect(events[0]).toEqual({ source_id: source.id, billing_key_id: capped.keyId, reason: 'spending_limit' });
    // The same request later, once payable, is captured (the refusal stored no dedup record).
    const limitless = await h.request('PATCH', `/sources/${source.id}`, {
      body: { billing_key_id: h.team.keyId },
      ifMatch: source.etag,
    });
    expect(limitless.status).toBe(200);
    expect((await receive(source.token, '{"n":1}', asBearer(source.secret))).status).toBe(200);
  });

  it('charges the capture to the billing key: ingestion plus delivery, like any message', async () => {
    const endpoint = await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/s' });
    expect(endpoint.status).toBe(201);
    const source = await bearerSource();
    const r = await receive(source.token, '{"paid":true}', asBearer(source.secret));
    expect(r.status).toBe(200);
    const charges = await h.services.db.query(
      'SELECT key_id, meter, units::int FROM charges WHERE resource_id = $1 ORDER BY meter',
      [r.json.message_id],
    );
    expect(charges.map((c: { meter: string }) => c.meter)).toEqual(['webhooks.delivery_16k', 'webhooks.ingest_64k']);
    expect(charges.every((c: { key_id: string }) => c.key_id === h.team.keyId)).toBe(true);
  });

  it('answers the chat url_verification challenge after verifying, storing nothing', async () => {
    const secret = 'chat-signing-secret-0123';
    const r = await post(h, '/sources', {
      tenant_id: tenantId,
      name: 'chat',
      verification: { kind: 'chat', secret },
      event_type: 'order.created',
    });
    const token = tokenOf(r.json.receive_url);
    const at = Math.floor(h.clock.now().getTime() / 1000);
    const body = JSON.stringify({ token: 'x', challenge: 'c-123', type: 'url_verification' });
    const { createHmac } = await import('node:crypto');
    const signature = `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`;
    const answer = await receive(token, body, {
      'content-type': 'application/json',
      'x-slack-signature': signature,
      'x-slack-request-timestamp': String(at),
    });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('c-123');
    const stored = await h.services.db.query('SELECT count(*)::int AS n FROM messages WHERE source_id = $1', [
      r.json.id,
    ]);
    expect(stored[0].n).toBe(0);
  });

  it('verifies what the official stripe library signs and what its constructEvent accepts', async () => {
    const secret = 'whsec_official_stripe_secret';
    const r = await post(h, '/sources', {
      tenant_id: tenantId,
      name: 'payments',
      verification: { kind: 'payments', secret },
      event_type_path: '/type',
    });
    const body = JSON.stringify({ id: 'evt_official', object: 'event', type: 'payment_intent.succeeded' });
    const header = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret,
      timestamp: Math.floor(h.clock.now().getTime() / 1000),
    });
    expect(Stripe.webhooks.constructEvent(body, header, secret, 1e9).id).toBe('evt_official');
    const answer = await receive(tokenOf(r.json.receive_url), body, {
      'content-type': 'application/json',
      'stripe-signature': header,
    });
    expect(answer.status, answer.text).toBe(200);
    const message = await h.request('GET', `/messages/${answer.json.message_id}`);
    expect(message.json.event_type).toBe('payment_intent.succeeded');
  });
});
