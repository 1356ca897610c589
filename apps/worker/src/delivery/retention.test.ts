import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, HOUR, MINUTE, RetentionService, SECOND, systemClock } from '@svc/core';
import { post } from '../../../server/src/testing/harness.js';
import { rawPost } from '../../../server/src/testing/raw-post.js';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * Retention with the injectable clock and the real engine: content after payload_retention_days but never while
 * a delivery of the message may still be attempted, shorter settings at once, response bodies, and messages with
 * their deliveries and attempts after 30 days. Each test moves the clock forward; the sweeps run as the
 * maintenance job does (services.retention.sweep).
 */
let stack: DeliveryStack;
beforeAll(async () => {
  stack = await startDeliveryStack({ service_concurrency: 20 });
});
afterAll(async () => {
  await stack.close();
});

const get = (path: string) => stack.h.request('GET', path);

async function patchSettings(body: Record<string, unknown>): Promise<void> {
  const current = await get('/settings');
  const r = await stack.h.request('PATCH', '/settings', { body, ifMatch: current.headers.get('etag')! });
  expect(r.status, r.text).toBe(200);
}

async function setEndpointStatus(endpointId: string, status: 'paused' | 'enabled'): Promise<void> {
  const current = await get(`/endpoints/${endpointId}`);
  const r = await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
    body: { status },
    ifMatch: current.headers.get('etag')!,
  });
  expect(r.status, r.text).toBe(200);
}

/** Publishes with a one-hour delivery window, so retention is not held up by the default 72 hours. */
async function publish(tenantId: string, payload: unknown): Promise<string> {
  const expiresAt = new Date(stack.h.clock.now().getTime() + HOUR).toISOString();
  const r = await post(stack.h, '/messages', {
    tenant_id: tenantId,
    event_type: 'order.created',
    payload,
    expires_at: expiresAt,
  });
  expect(r.status, r.text).toBe(202);
  return r.json.id;
}

async function deliveryOf(messageId: string): Promise<{ id: string }> {
  const [d] = (await stack.h.services.deliveries.listDeliveries({ actor: stack.h.team }, { message_id: messageId }))
    .data;
  return d!;
}

async function finished(messageId: string, status: string): Promise<void> {
  await stack.until(`message ${messageId} to be ${status}`, async () =>
    (await stack.messageStatus(messageId)).status === status ? true : undefined,
  );
}

async function storedBody(messageId: string): Promise<Buffer | null> {
  const rows = await stack.h.services.db.query('SELECT body FROM message_contents WHERE message_id = $1', [messageId]);
  return rows[0]?.body ?? null;
}

describe('content retention', () => {
  it('erases content after payload_retention_days, but keeps it while a replay may still be attempted', async () => {
    await patchSettings({ payload_retention_days: 1 });
    stack.script.set('/kept', [400]);
    const { tenantId, endpointId } = await stack.setup('/kept');
    const plain = await publish(tenantId, { plain: true });
    const replayed = await publish(tenantId, { replayed: true });
    await finished(plain, 'failed');
    await finished(replayed, 'failed');
    expect((await get(`/messages/${plain}`)).json.retained_until).toBe(
      new Date(stack.h.clock.now().getTime() + DAY).toISOString(),
    );

    // 23 hours later the receiver is fixed but paused; a replay is queued with its own 72-hour window.
    await stack.advance(23 * HOUR);
    await setEndpointStatus(endpointId, 'paused');
    stack.script.set('/kept', [200]);
    const replay = await post(stack.h, `/deliveries/${(await deliveryOf(replayed)).id}/replay`, {});
    expect(replay.status, replay.text).toBe(202);

    await stack.advance(HOUR + MINUTE);
    for (const id of [plain, replayed]) {
      const content = await get(`/messages/${id}/content`);
      expect(content.status, id).toBe(410);
      expect(content.json.error.code).toBe('payload_expired');
    }
    const report = await stack.h.services.retention.sweep();
    expect(report.contentErased).toBe(1);
    expect(await storedBody(plain)).toBeNull();
    expect((await get(`/messages/${plain}`)).json).toMatchObject({ content_available: false, redacted: false });
    // The replay may still be attempted: its bytes stay until it finishes.
    expect(await storedBody(replayed)).not.toBeNull();

    await setEndpointStatus(endpointId, 'enabled');
    // The paused endpoint's job looks again after 30 seconds.
    await stack.advance(31 * SECOND);
    await stack.until('the replay to succeed', async () => {
      const d = await stack.h.services.deliveries.getDelivery({ actor: stack.h.team }, replay.json.id);
      return d.status === 'succeeded' ? d : undefined;
    });
    const last = stack.received.filter((r) => r.path === '/kept').at(-1)!;
    expect(last.body.toString('utf8')).toBe('{"replayed":true}');
    expect((await stack.h.services.retention.sweep()).contentErased).toBe(1);
    expect(await storedBody(replayed)).toBeNull();
    const counters = await stack.h.services.db.query(
      `SELECT coalesce(sum(content_bytes), 0)::int AS n FROM team_queue_counts WHERE team_id = $1`,
      [stack.h.team.teamId],
    );
    const live = await stack.h.services.db.query(
      `SELECT coalesce(sum(octet_length(c.body)), 0)::int + coalesce((SELECT sum(octet_length(body)) FROM deliveries
              WHERE team_id = $1 AND body IS NOT NULL), 0)::int AS n
         FROM message_contents c WHERE c.team_id = $1`,
      [stack.h.team.teamId],
    );
    expect(counters[0].n).toBe(live[0].n);
    await patchSettings({ payload_retention_days: 30 });
  });

  it('applies a shorter payload_retention_days to stored messages at once; a longer one restores nothing', async () => {
    await patchSettings({ payload_retention_days: 30 });
    const { tenantId } = await stack.setup('/shorter');
    const id = await publish(tenantId, { n: 1 });
    await finished(id, 'succeeded');
    await stack.advance(2 * DAY);
    expect((await get(`/messages/${id}/content`)).status).toBe(200);
    const created = new Date((await get(`/messages/${id}`)).json.created_at).getTime();

    await patchSettings({ payload_retention_days: 1 });
    expect((await get(`/messages/${id}/content`)).status).toBe(410);
    expect((await get(`/messages/${id}`)).json).toMatchObject({
      retained_until: new Date(created + DAY).toISOString(),
      content_available: false,
    });
    expect((await stack.h.services.retention.sweep()).contentErased).toBe(1);
    expect(await storedBody(id)).toBeNull();

    await patchSettings({ payload_retention_days: 30 });
    expect((await get(`/messages/${id}/content`)).status).toBe(410);
    expect((await get(`/messages/${id}`)).json.content_available).toBe(false);
  });

  it('erases in small batches, each its own transaction, until none is left', async () => {
    await patchSettings({ payload_retention_days: 30 });
    const { tenantId } = await stack.setup('/batches');
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await publish(tenantId, { i }));
    for (const id of ids) await finished(id, 'succeeded');
    await patchSettings({ payload_retention_days: 1 });
    await stack.advance(DAY + MINUTE);
    expect(await stack.h.services.retention.eraseExpiredContent(2)).toBe(2);
    expect(await stack.h.services.retention.eraseExpiredContent(2)).toBe(2);
    expect(await stack.h.services.retention.eraseExpiredContent(2)).toBe(1);
    expect(await stack.h.services.retention.eraseExpiredContent(2)).toBe(0);
    for (const id of ids) expect(await storedBody(id)).toBeNull();
    await patchSettings({ payload_retention_days: 30 });
  });
});

describe('deleted tenants', () => {
  it("stops reading a deleted tenant's content at once and the sweep erases it", async () => {
    const { tenantId } = await stack.setup('/deleted-tenant');
    const id = await publish(tenantId, { n: 1 });
    await finished(id, 'succeeded');
    stack.h.clock.advance(1000);
    const tenant = await get(`/tenants/${tenantId}`);
    const deleted = await stack.h.request('DELETE', `/tenants/${tenantId}`, { ifMatch: tenant.headers.get('etag')! });
    expect(deleted.status, deleted.text).toBe(204);
    const content = await get(`/messages/${id}/content`);
    expect(content.status).toBe(410);
    expect((await get(`/messages/${id}`)).json).toMatchObject({
      content_available: false,
      retained_until: stack.h.clock.now().toISOString(),
    });
    expect(await storedBody(id)).not.toBeNull();
    expect((await stack.h.services.retention.sweep()).contentErased).toBe(1);
    expect(await storedBody(id)).toBeNull();
  });
});

describe('response bodies, attempts and messages', () => {
  it('hides response bodies after response_retention_days at once and the sweep erases them', async () => {
    await patchSettings({ response_body_logging: true, response_retention_days: 1 });
    const { tenantId } = await stack.setup('/responses');
    const id = await publish(tenantId, { n: 1 });
    await finished(id, 'succeeded');
    const delivery = await deliveryOf(id);
    const attempts = async () => (await get(`/deliveries/${delivery.id}/attempts`)).json.data;
    expect((await attempts())[0].response_body).toBe('ok');

    await stack.advance(DAY + MINUTE);
    expect((await attempts())[0].response_body).toBeNull();
    const stored = () =>
      stack.h.services.db.query('SELECT response_body FROM attempts WHERE delivery_id = $1', [delivery.id]);
    expect((await stored())[0].response_body).not.toBeNull();
    expect((await stack.h.services.retention.sweep()).responseBodiesErased).toBeGreaterThanOrEqual(1);
    expect((await stored())[0].response_body).toBeNull();
    await patchSettings({ response_body_logging: false, response_retention_days: 7 });
  });

  it('deletes messages with their deliveries and attempts 30 days after acceptance; charges stay', async () => {
    const { tenantId } = await stack.setup('/old');
    const id = await publish(tenantId, { n: 1 });
    await finished(id, 'succeeded');
    const delivery = await deliveryOf(id);
    const charges = () =>
      stack.h.services.db.query('SELECT count(*)::int AS n FROM charges WHERE resource_id = $1', [id]);
    const before = (await charges())[0].n;
    expect(before).toBeGreaterThan(0);

    await stack.advance(29 * DAY);
    await stack.h.services.retention.sweep();
    expect((await get(`/messages/${id}`)).status).toBe(200);
    await stack.advance(DAY + MINUTE);
    const report = await stack.h.services.retention.sweep();
    expect(report.messagesDeleted).toBeGreaterThanOrEqual(1);
    expect((await get(`/messages/${id}`)).status).toBe(404);
    expect((await get(`/deliveries/${delivery.id}`)).status).toBe(404);
    const attempts = await stack.h.services.db.query('SELECT count(*)::int AS n FROM attempts WHERE delivery_id = $1', [
      delivery.id,
    ]);
    expect(attempts[0].n).toBe(0);
    expect((await charges())[0].n).toBe(before);
  });
});

describe('source event IDs', () => {
  it('are deleted by the sweep after their keep: provider IDs after 35 days, body hashes after 24 hours', async () => {
    const { tenantId } = await stack.setup('/captures');
    const source = await post(stack.h, '/sources', {
      tenant_id: tenantId,
      name: 'retention',
      verification: { kind: 'bearer' },
      event_type: 'order.created',
    });
    expect(source.status, source.text).toBe(201);
    const token = String(source.json.receive_url).split('/receive/')[1]!;
    const captured = await rawPost(`${stack.h.baseUrl}/receive/${token}`, '{"n":1}', {
      authorization: `Bearer ${source.json.secret}`,
      'content-type': 'application/json',
    });
    expect(captured.status, captured.text).toBe(200);
    // Provider IDs received 36 and 34 days ago (kept 35 days), written as the receive route writes them.
    const now = stack.h.clock.now().getTime();
    await stack.h.services.db.query(
      `INSERT INTO source_event_ids (source_id, event_key, message_id, expires_at)
       VALUES ($1, 'id:old', $3, $2::timestamptz - interval '1 day'), ($1, 'id:recent', $3, $2::timestamptz + interval '1 day')`,
      [source.json.id, new Date(now), captured.json.message_id],
    );
    const keys = async () =>
      (
        await stack.h.services.db.query(
          'SELECT event_key FROM source_event_ids WHERE source_id = $1 ORDER BY event_key',
          [source.json.id],
        )
      ).map((r: { event_key: string }) => r.event_key);
    expect(await keys()).toHaveLength(3);

    expect((await stack.h.services.retention.sweep()).sourceEventIdsPurged).toBe(1);
    const kept = await keys();
    expect(kept).toHaveLength(2);
    expect(kept).toContain('id:recent');
    expect(kept).not.toContain('id:old');

    // A day later the body hash (24 hours) and the provider ID received 34 days ago (now 35) are gone too.
    await stack.advance(DAY + MINUTE);
    expect((await stack.h.services.retention.sweep()).sourceEventIdsPurged).toBe(2);
    expect(await keys()).toEqual([]);
  });
});

describe('sessions', () => {
  const sessionIds = async (): Promise<string[]> =>
    (
      await stack.h.services.db.query(
        `SELECT id FROM console_sessions WHERE team_id = $1
         UNION ALL SELECT id FROM portal_sessions WHERE team_id = $1 ORDER BY id`,
        [stack.h.team.teamId],
      )
    ).map((row: { id: string }) => row.id);

  /** Rows as the services write them, ended at the given times (only expires_at matters to the sweep). */
  async function insertSessions(prefix: string, expiries: Date[]): Promise<string[]> {
    const [key] = await stack.h.services.db.query('SELECT id FROM api_keys WHERE team_id = $1 LIMIT 1', [
      stack.h.team.teamId,
    ]);
    const ids = expiries.map((_, index) => `cs_${prefix}${index}`);
    for (const [index, expiresAt] of expiries.entries())
      await stack.h.services.db.query(
        `INSERT INTO console_sessions (id, team_id, key_id, token_sha256, created_at, expires_at, last_seen_at)
         VALUES ($1, $2, $3, $4, $5, $5, $5)`,
        [ids[index], stack.h.team.teamId, key.id, Buffer.from(ids[index]!), expiresAt],
      );
    return ids;
  }

  it('deletes console and portal sessions 30 days after they expired, revoked or not; newer ones stay', async () => {
    const { tenantId } = await stack.setup('/sessions');
    const portal = async (expiresInSeconds: number) => {
      const r = await post(stack.h, `/tenants/${tenantId}/portal_sessions`, { expires_in_seconds: expiresInSeconds });
      expect(r.status, r.text).toBe(201);
      return r.json.id as string;
    };
    const listedPortalSessions = async () => {
      const r = await stack.h.request('GET', `/tenants/${tenantId}/portal_sessions`);
      expect(r.status, r.text).toBe(200);
      return (r.json.data as { id: string }[]).map((session) => session.id);
    };

    // A console session (12 hours) and a portal session of 7 days, made now; the portal one revoked at once.
    const before = await sessionIds();
    await stack.h.services.consoleSessions.createSession(stack.h.team.key);
    const [consoleSession] = (await sessionIds()).filter((id) => !before.includes(id));
    const longPortal = await portal(7 * 24 * 3600);
    const revoked = await post(stack.h, `/tenants/${tenantId}/portal_sessions/${longPortal}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);
    expect(await sessionIds()).toEqual(expect.arrayContaining([consoleSession, longPortal]));

    // 30 days and 13 hours on: the console session expired 30 days and an hour ago and goes; the portal session
    // (revoked, but expiring 7 days after it was made) stays until 30 days after that expiry, listed.
    await stack.advance(30 * DAY + 13 * HOUR);
    const newer = await portal(3600);
    const first = await stack.h.services.retention.sweep();
    expect(first.sessionsDeleted).toBeGreaterThanOrEqual(1);
    expect(await sessionIds()).toEqual([longPortal, newer].sort());
    expect(await listedPortalSessions()).toEqual(expect.arrayContaining([longPortal, newer]));

    // The session's rate-limit buckets (keyed by its ID, docs/portal.md) go with it.
    const bucketsOf = async (id: string) =>
      (
        (await stack.h.services.db.query('SELECT count(*)::int AS n FROM rate_limit_buckets WHERE team_id = $1', [
          id,
        ])) as { n: number }[]
      )[0]!.n;
    await stack.h.services.db.query(
      `INSERT INTO rate_limit_buckets (team_id, bucket, tokens, updated_at, granted) VALUES ($1, 'read', 1, now(), 0)`,
      [longPortal],
    );
    expect(await bucketsOf(longPortal)).toBe(1);
    await stack.advance(7 * DAY);
    expect((await stack.h.services.retention.sweep()).sessionsDeleted).toBe(1);
    expect(await sessionIds()).toEqual([newer]);
    expect(await listedPortalSessions()).toEqual([newer]);
    expect(await bucketsOf(longPortal)).toBe(0);
  });

  it('in small batches: a batch never deletes more than its size', async () => {
    const old = new Date(stack.h.clock.now().getTime() - 31 * DAY);
    await insertSessions('batch', [old, old, old]);
    expect(await stack.h.services.retention.deleteEndedSessions(2)).toBe(2);
    expect(await stack.h.services.retention.deleteEndedSessions(2)).toBe(1);
    expect(await stack.h.services.retention.deleteEndedSessions(2)).toBe(0);
  });

  it('on the real clock: a session that expired 31 days ago goes, one that expired 29 days ago stays', async () => {
    const now = Date.now();
    const [gone, kept] = await insertSessions('real', [new Date(now - 31 * DAY), new Date(now - 29 * DAY)]);
    const retention = new RetentionService(stack.h.services.db, systemClock);
    expect(await retention.deleteEndedSessions(200)).toBeGreaterThanOrEqual(1);
    const left = await sessionIds();
    expect(left).not.toContain(gone);
    expect(left).toContain(kept);
  });
});
