import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, post, uniqueKey, type Harness, type TestTeam } from '../testing/harness.js';

let h: Harness;
let team: TestTeam;
let tenantId: string;

async function eventType(name: string, t: TestTeam = team): Promise<void> {
  const r = await post(h, '/event_types', { name }, { key: t.key });
  expect(r.status).toBe(201);
}

async function endpoint(body: Record<string, unknown>, t: TestTeam = team): Promise<string> {
  const r = await post(h, '/endpoints', { url: 'https://example.com/hook', ...body }, { key: t.key });
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}

beforeAll(async () => {
  h = await startHarness();
  team = h.team;
  await h.services.teams.setPaymentCard(team.teamId, true);
  const tenant = await post(h, '/tenants', { external_id: 'acme', name: 'Acme' });
  tenantId = tenant.json.id;
  await eventType('invoice.paid');
  await eventType('invoice.voided');
});
afterAll(async () => {
  await h.close();
});

describe('POST /messages', () => {
  it('accepts a payload with 202, keeps its exact bytes minus whitespace, and prices it', async () => {
    const ep = await endpoint({ tenant_id: tenantId });
    const payload = '{ "b" : 1.50e2 , "a" : "caf\\u00e9 \u00e9", "n": [ 1, 2 ] }';
    const raw = `{"tenant_id":"${tenantId}","event_type":"invoice.paid","payload":${payload}}`;
    const r = await h.request('POST', '/messages', { idempotencyKey: uniqueKey(), body: raw, raw: true });
    expect(r.status, r.text).toBe(202);
    const minified = '{"b":1.50e2,"a":"caf\\u00e9 \u00e9","n":[1,2]}';
    expect(r.json.body_bytes).toBe(Buffer.byteLength(minified));
    expect(r.json.body_sha256).toBe(createHash('sha256').update(minified).digest('hex'));
    expect(r.json.status).toBe('queued');
    expect(r.json.delivery_counts.queued).toBe(1);
    expect(r.json.price).toEqual({
      ingest_units: 1,
      delivery_units: 1,
      total_usd: '0.00006',
      rate_version: '2026-10-08',
    });
    const rows = await h.services.db.query('SELECT endpoint_id FROM deliveries WHERE message_id = $1', [r.json.id]);
    expect(rows).toEqual([{ endpoint_id: ep }]);
    const content = await h.services.db.query('SELECT body FROM message_contents WHERE message_id = $1', [r.json.id]);
    expect(content[0].body.toString('utf8')).toBe(minified);
    const read = await h.request('GET', `/messages/${r.json.id}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(r.json);
  });

  it('refuses an archived or unknown event type with 422 invalid_event_type naming the field', async () => {
    const r = await post(h, '/messages', { tenant_id: tenantId, event_type: 'nope.never', payload: {} });
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: 'invalid_event_type', field: 'event_type' });
  });

  it('accepts a message that matches nothing with status no_destinations and charges ingestion', async () => {
    const other = await post(h, '/tenants', { external_id: 'lonely', name: 'Lonely' });
    const r = await post(h, '/messages', { tenant_id: other.json.id, event_type: 'invoice.paid', payload: null });
    expect(r.status).toBe(202);
    expect(r.json.status).toBe('no_destinations');
    expect(r.json.price).toMatchObject({ ingest_units: 1, delivery_units: 0, total_usd: '0.00001' });
    const charges = await h.services.db.query('SELECT meter, units::int AS units FROM charges WHERE resource_id = $1', [
      r.json.id,
    ]);
    expect(charges).toEqual([{ meter: 'webhooks.ingest_64k', units: 1 }]);
  });

  it('is idempotent: a replay returns the first response and costs nothing', async () => {
    const key = uniqueKey();
    const body = { tenant_id: tenantId, event_type: 'invoice.voided', payload: { n: 1 } };
    const first = await h.request('POST', '/messages', { idempotencyKey: key, body });
    const second = await h.request('POST', '/messages', { idempotencyKey: key, body });
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.json.id).toBe(first.json.id);
    const charges = await h.services.db.query('SELECT count(*)::int AS n FROM charges WHERE resource_id = $1', [
      first.json.id,
    ]);
    expect(charges[0].n).toBeGreaterThan(0);
    const messages = await h.services.db.query(
      `SELECT count(*)::int AS n FROM messages WHERE team_id = $1 AND event_type = 'invoice.voided'`,
      [team.teamId],
    );
    expect(messages[0].n).toBe(1);
  });

  it('needs a payment card (402 billing_required) and stores nothing without one', async () => {
    const poor = await h.newTeam('poor');
    await h.services.teams.setPaymentCard(poor.teamId, false);
    await eventType('a.b', poor);
    const tenant = await post(h, '/tenants', { external_id: 'x', name: 'X' }, { key: poor.key });
    const r = await post(
      h,
      '/messages',
      { tenant_id: tenant.json.id, event_type: 'a.b', payload: 1 },
      { key: poor.key },
    );
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('billing_required');
    const rows = await h.services.db.query('SELECT count(*)::int AS n FROM messages WHERE team_id = $1', [poor.teamId]);
    expect(rows[0].n).toBe(0);
  });

  it('deleting an endpoint or a tenant cancels their waiting deliveries (the message becomes canceled)', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'going', name: 'Going' });
    const first = await endpoint({ tenant_id: tenant.json.id });
    const later = new Date(h.clock.now().getTime() + 3600_000).toISOString();
    const m1 = await post(h, '/messages', {
      tenant_id: tenant.json.id,
      event_type: 'invoice.paid',
      payload: { a: 1 },
      deliver_at: later,
    });
    expect(m1.json.status).toBe('scheduled');
    const etag = (await h.request('GET', `/endpoints/${first}`)).headers.get('etag')!;
    expect((await h.request('DELETE', `/endpoints/${first}`, { ifMatch: etag })).status).toBe(204);
    expect((await h.request('GET', `/messages/${m1.json.id}`)).json.status).toBe('canceled');

    await endpoint({ tenant_id: tenant.json.id });
    const m2 = await post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'invoice.paid', payload: 2 });
    expect(m2.json.delivery_counts.queued).toBe(1);
    const tenantEtag = (await h.request('GET', `/tenants/${tenant.json.id}`)).headers.get('etag')!;
    expect((await h.request('DELETE', `/tenants/${tenant.json.id}`, { ifMatch: tenantEtag })).status).toBe(204);
    const read = await h.request('GET', `/messages/${m2.json.id}`);
    expect(read.json.status).toBe('canceled');
    expect(read.json.delivery_counts.canceled).toBe(1);
    const pending = await h.services.db.query(
      `SELECT coalesce(sum(pending), 0)::int AS n FROM endpoint_queue_counts q JOIN endpoints e ON e.id = q.endpoint_id
        WHERE e.tenant_id = $1`,
      [tenant.json.id],
    );
    expect(pending[0].n).toBe(0);
  });
});
