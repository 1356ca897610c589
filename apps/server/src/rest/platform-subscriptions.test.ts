import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HOUR } from '@svc/core';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';

/**
 * Event subscriptions through REST (spec/event-subscriptions.md, docs/platform.md): validation, the secret shown
 * once, the 20-subscription quota, PATCH and versions, rotation rules, deletion, idempotent replays, the delivery
 * list. No worker runs here: deliveries stay pending (the worker's tests deliver them).
 */
let h: Harness;
let environmentId: string;

beforeAll(async () => {
  h = await startHarness({ strictUrls: true });
  environmentId = (await post(h, '/platform/feature_flags/environments', { name: 'production' })).json.id;
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  // The clock stands still: refill the config-write bucket between tests.
  h.clock.advance(10_000);
});

const body = (extra: Record<string, unknown> = {}) => ({
  url: 'https://receiver.example.com/flags',
  events: ['feature_flags.flag.updated'],
  environment_ids: [environmentId],
  ...extra,
});

async function create(extra: Record<string, unknown> = {}, options: { idempotencyKey?: string; key?: string } = {}) {
  h.clock.advance(200);
  return post(h, '/platform/event_subscriptions', body(extra), options);
}

async function clearSubscriptions() {
  await h.services.db.query(`UPDATE event_subscriptions SET deleted_at = now() WHERE team_id = $1`, [h.team.teamId]);
}

describe('create and read', () => {
  it('answers 201 with the secret once (whsec_ + base64url); reads and lists never show it', async () => {
    const created = await create({ description: 'flags to ops', format: 'svc' });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^whe_[0-9a-z]{26}$/),
      url: 'https://receiver.example.com/flags',
      events: ['feature_flags.flag.updated'],
      environment_ids: [environmentId],
      description: 'flags to ops',
      enabled: true,
      disabled_reason: null,
      format: 'svc',
      version: '1',
      secret_rotation_ends_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    expect(created.headers.get('etag')).toBe(`"wd:${created.json.id}:1"`);
    const read = await h.request('GET', `/platform/event_subscriptions/${created.json.id}`);
    expect(read.json).toEqual({ ...created.json, secret: undefined });
    expect(read.text).not.toContain(created.json.secret);
    const list = await h.request('GET', '/platform/event_subscriptions');
    expect(list.text).not.toContain('whsec_');
    expect(list.json.data.map((s: { id: string }) => s.id)).toContain(created.json.id);
    const defaults = await create({});
    expect(defaults.json).toMatchObject({ format: 'svc', description: '' });
  });

  it('refuses bad fields with the documented codes', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url: 'http://10.0.0.7/hook' }, 'unsafe_url', 'url'],
      [{ url: 'https://localhost/hook' }, 'unsafe_url', 'url'],
      [{ url: 'not a url' }, 'invalid_field', 'url'],
      [{ events: [] }, 'invalid_field', 'events'],
      [{ events: ['feature_flags.flag.deleted'] }, 'invalid_field', 'events.0'],
      [{ events: ['feature_flags.*', 'feature_flags.*'] }, 'invalid_field', 'events'],
      [{ environment_ids: [] }, 'invalid_field', 'environment_ids'],
      [{ environment_ids: ['ffe_00000000000000000000000000'] }, 'invalid_field', 'environment_ids'],
      [{ environment_ids: ['wdt_1'] }, 'invalid_field', 'environment_ids.0'],
      [{ format: 'slack' }, 'invalid_field', 'format'],
      [{ description: 'x'.repeat(1025) }, 'invalid_field', 'description'],
      [{ secret: 'whsec_mine' }, 'invalid_field', 'secret'],
    ];
    for (const [extra, code, field] of cases) {
      const r = await create(extra);
      expect(r.status, JSON.stringify(extra)).toBe(422);
      expect(r.json.error, JSON.stringify(extra)).toMatchObject({ code, field });
    }
    const other = await h.newTeam('subs-other');
    const foreign = await post(h, '/platform/event_subscriptions', body(), { key: other.key });
    expect(foreign.json.error).toMatchObject({ code: 'invalid_field', field: 'environment_ids' });
    const missing = await h.request('POST', '/platform/event_subscriptions', { body: body() });
    expect(missing.json.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
  });

  it('allows 20 active subscriptions per team: the 21st, or enabling one more, is 409 quota_exceeded', async () => {
    await clearSubscriptions();
    const made: { id: string; etag: string }[] = [];
    for (let i = 0; i < 20; i += 1) {
      h.clock.advance(1000);
      const r = await create({ description: `n${i}` });
      expect(r.status, r.text).toBe(201);
      made.push({ id: r.json.id, etag: r.headers.get('etag')! });
    }
    const over = await create();
    expect(over.status).toBe(409);
    expect(over.json.error.code).toBe('quota_exceeded');
    // A disabled one does not count; enabling it again at the limit does.
    const disabled = await h.request('PATCH', `/platform/event_subscriptions/${made[0]!.id}`, {
      ifMatch: made[0]!.etag,
      body: { enabled: false },
    });
    expect(disabled.json).toMatchObject({ enabled: false, disabled_reason: 'disabled_by_user', version: '2' });
    const twentieth = await create();
    expect(twentieth.status).toBe(201);
    const enable = await h.request('PATCH', `/platform/event_subscriptions/${made[0]!.id}`, {
      ifMatch: disabled.headers.get('etag')!,
      body: { enabled: true },
    });
    expect(enable.json.error.code).toBe('quota_exceeded');
    // Deleting frees a place.
    h.clock.advance(1000);
    expect((await h.request('DELETE', `/platform/event_subscriptions/${made[1]!.id}`)).status).toBe(200);
    const again = await h.request('PATCH', `/platform/event_subscriptions/${made[0]!.id}`, {
      ifMatch: disabled.headers.get('etag')!,
      body: { enabled: true },
    });
    expect(again.json).toMatchObject({ enabled: true, disabled_reason: null, version: '3' });
    await clearSubscriptions();
  });
});

describe('change, rotate, delete', () => {
  it('PATCH needs If-Match; a change gives a new version, no change keeps it', async () => {
    const created = await create();
    const id = created.json.id as string;
    const path = `/platform/event_subscriptions/${id}`;
    expect((await h.request('PATCH', path, { body: { description: 'x' } })).status).toBe(428);
    const stale = await h.request('PATCH', path, { ifMatch: `"wd:${id}:0"`, body: { description: 'x' } });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('etag')).toBe(created.headers.get('etag'));
    const staging = (await post(h, '/platform/feature_flags/environments', { name: `staging-${id}` })).json.id;
    const changed = await h.request('PATCH', path, {
      ifMatch: created.headers.get('etag')!,
      body: {
        description: 'now chat',
        format: 'chat_a',
        events: ['feature_flags.*'],
        environment_ids: [environmentId, staging],
        url: 'https://hooks.example.com/services/T/B/x',
      },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      description: 'now chat',
      format: 'chat_a',
      events: ['feature_flags.*'],
      environment_ids: [environmentId, staging],
      url: 'https://hooks.example.com/services/T/B/x',
      version: '2',
    });
    expect(changed.json.secret).toBeUndefined();
    const same = await h.request('PATCH', path, {
      ifMatch: changed.headers.get('etag')!,
      body: { description: 'now chat' },
    });
    expect(same.json.version).toBe('2');
    const unsafe = await h.request('PATCH', path, {
      ifMatch: changed.headers.get('etag')!,
      body: { url: 'http://169.254.169.254/' },
    });
    expect(unsafe.json.error).toMatchObject({ code: 'unsafe_url', field: 'url' });
    const unknown = await h.request('PATCH', path, { ifMatch: changed.headers.get('etag')!, body: { secret: 'x' } });
    expect(unknown.json.error).toMatchObject({ code: 'invalid_field', field: 'secret' });
  });

  it('rotate_secret shows the new secret once with secret_rotation_ends_at; a second overlap is 409 until it ends', async () => {
    const created = await create();
    const id = created.json.id as string;
    const rotated = await post(h, `/platform/event_subscriptions/${id}/rotate_secret`, { overlap_seconds: 600 });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.json.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(rotated.json.secret).not.toBe(created.json.secret);
    expect(rotated.json.version).toBe('2');
    expect(new Date(rotated.json.secret_rotation_ends_at).getTime()).toBe(h.clock.now().getTime() + 600_000);
    const again = await post(h, `/platform/event_subscriptions/${id}/rotate_secret`, { overlap_seconds: 60 });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('invalid_state');
    const now = await post(h, `/platform/event_subscriptions/${id}/rotate_secret`, { overlap_seconds: 0 });
    expect(now.status).toBe(200);
    expect(now.json.secret_rotation_ends_at).toBeNull();
    const stale = await post(
      h,
      `/platform/event_subscriptions/${id}/rotate_secret`,
      {},
      { ifMatch: rotated.headers.get('etag')! },
    );
    expect(stale.status).toBe(412);
    for (const overlap of [-1, 86_401, 1.5, '60'])
      expect(
        (await post(h, `/platform/event_subscriptions/${id}/rotate_secret`, { overlap_seconds: overlap })).json.error,
      ).toMatchObject({
        code: 'invalid_field',
        field: 'overlap_seconds',
      });
    // Default overlap: 24 hours.
    h.clock.advance(HOUR);
    const defaulted = await post(h, `/platform/event_subscriptions/${id}/rotate_secret`, {});
    expect(new Date(defaulted.json.secret_rotation_ends_at).getTime()).toBe(h.clock.now().getTime() + 24 * HOUR);
  });

  it('an idempotent replay shows the secret only to the key that made it, while nothing changed since', async () => {
    const key = uniqueKey();
    const first = await create({ description: 'replay' }, { idempotencyKey: key });
    const replay = await create({ description: 'replay' }, { idempotencyKey: key });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json).toEqual(first.json);
    const conflict = await create({ description: 'another' }, { idempotencyKey: key });
    expect(conflict.json.error.code).toBe('idempotency_conflict');
    const second = await h.services.teams.createKey(h.team.teamId);
    const otherKey = await create({ description: 'replay' }, { idempotencyKey: key, key: second.secret });
    expect(otherKey.json.secret).toBeUndefined();
    expect(otherKey.json.id).toBe(first.json.id);
    await h.request('PATCH', `/platform/event_subscriptions/${first.json.id}`, {
      ifMatch: first.headers.get('etag')!,
      body: { description: 'changed' },
    });
    const afterChange = await create({ description: 'replay' }, { idempotencyKey: key });
    expect(afterChange.json.secret).toBeUndefined();
    const stored: { response_body: Buffer }[] = await h.services.db.query(
      `SELECT response_body FROM idempotency_records WHERE response_body IS NOT NULL`,
    );
    expect(stored.some((row) => row.response_body.toString().includes(first.json.secret))).toBe(false);
  });

  it('DELETE answers {id, deleted, in_flight_may_complete} and cancels pending deliveries; then 404', async () => {
    const created = await create({ events: ['feature_flags.*'] });
    const id = created.json.id as string;
    h.clock.advance(1000);
    const flag = await h.request('PUT', `/platform/feature_flags/environments/${environmentId}/flags/deleting`, {
      idempotencyKey: uniqueKey(),
      body: { enabled: true },
    });
    expect(flag.status).toBe(201);
    const pending = await h.request('GET', `/platform/event_subscriptions/${id}/deliveries`);
    expect(pending.json.data).toEqual([
      expect.objectContaining({ status: 'pending', sequence: '1', trigger: 'event', attempts: [], attempt_count: 0 }),
    ]);
    const stale = await h.request('DELETE', `/platform/event_subscriptions/${id}`, { ifMatch: `"wd:${id}:9"` });
    expect(stale.status).toBe(412);
    const deleted = await h.request('DELETE', `/platform/event_subscriptions/${id}`, {
      ifMatch: created.headers.get('etag')!,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ id, deleted: true, in_flight_may_complete: false });
    const rows: { status: string }[] = await h.services.db.query(
      `SELECT status FROM subscription_deliveries WHERE subscription_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ status: 'canceled' }]);
    expect((await h.request('GET', `/platform/event_subscriptions/${id}`)).status).toBe(404);
    expect((await h.request('DELETE', `/platform/event_subscriptions/${id}`)).status).toBe(404);
  });
});

describe('deliveries and the test event', () => {
  it('lists deliveries newest first; a later one waits (next_attempt_at null) behind the first; filters and cursors', async () => {
    const sub = await create({ events: ['feature_flags.*'] });
    const id = sub.json.id as string;
    for (const key of ['d1', 'd2', 'd3']) {
      h.clock.advance(1000);
      await h.request('PUT', `/platform/feature_flags/environments/${environmentId}/flags/${key}`, {
        idempotencyKey: uniqueKey(),
        body: { enabled: true },
      });
    }
    const list = await h.request('GET', `/platform/event_subscriptions/${id}/deliveries`);
    expect(list.json.data.map((d: { sequence: string }) => d.sequence)).toEqual(['3', '2', '1']);
    const [third, , first] = list.json.data;
    expect(first.next_attempt_at).not.toBeNull();
    expect(third).toMatchObject({ status: 'pending', ordered: true, next_attempt_at: null, endpoint_id: id });
    const page = await h.request('GET', `/platform/event_subscriptions/${id}/deliveries?limit=2`);
    const rest = await h.request(
      'GET',
      `/platform/event_subscriptions/${id}/deliveries?limit=2&cursor=${page.json.next_cursor}`,
    );
    expect(rest.json.data.map((d: { id: string }) => d.id)).toEqual([first.id]);
    const byEvent = await h.request('GET', `/platform/event_subscriptions/${id}/deliveries?event_id=${third.event_id}`);
    expect(byEvent.json.data).toHaveLength(1);
    expect(
      (await h.request('GET', `/platform/event_subscriptions/${id}/deliveries?status=succeeded`)).json.data,
    ).toEqual([]);
    expect(
      (await h.request('GET', `/platform/event_subscriptions/${id}/deliveries?status=nope`)).json.error.field,
    ).toBe('status');
    const crossCursor = await h.request(
      'GET',
      `/platform/event_subscriptions/${id}/deliveries?status=pending&cursor=${page.json.next_cursor}`,
    );
    expect(crossCursor.json.error.code).toBe('invalid_cursor');
  });

  it('POST test answers 202 {event_id, endpoint_id}; a disabled subscription is 409 invalid_state', async () => {
    const sub = await create();
    const id = sub.json.id as string;
    const queued = await post(h, `/platform/event_subscriptions/${id}/test`, {});
    expect(queued.status, queued.text).toBe(202);
    expect(queued.json).toEqual({ event_id: expect.stringMatching(/^evt_/), endpoint_id: id });
    const event = await h.request('GET', `/platform/events/${queued.json.event_id}`);
    expect(event.json).toEqual({
      id: queued.json.event_id,
      type: 'feature_flags.webhook.test',
      created_at: expect.any(String),
      team_id: h.team.teamId,
      environment_id: null,
      revision: null,
      data: { endpoint_id: id },
    });
    const typed = await h.request('GET', '/platform/events?type=feature_flags.webhook.test');
    expect(typed.json.data[0].id).toBe(queued.json.event_id);
    const disabled = await h.request('PATCH', `/platform/event_subscriptions/${id}`, {
      ifMatch: sub.headers.get('etag')!,
      body: { enabled: false },
    });
    expect(disabled.status).toBe(200);
    const refused = await post(h, `/platform/event_subscriptions/${id}/test`, {});
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('invalid_state');
    const withBody = await post(h, `/platform/event_subscriptions/${id}/test`, { payload: 1 });
    expect(withBody.json.error).toMatchObject({ code: 'invalid_field', field: 'payload' });
  });
});
