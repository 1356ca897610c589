import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, uniqueKey, type Harness, type TestTeam } from '../testing/harness.js';

let h: Harness;
let team: TestTeam;
let tenantId: string;
beforeAll(async () => {
  h = await startHarness();
  team = h.team;
  const tenant = await post(h, '/tenants', { external_id: 'acme', name: 'Acme' });
  tenantId = tenant.json.id;
  await post(h, '/event_types', { name: 'invoice.paid' });
});
afterAll(async () => {
  await h.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function endpoint(body: Record<string, unknown> = {}): Promise<{ id: string; etag: string }> {
  const r = await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/hook', ...body });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id, etag: r.headers.get('etag')! };
}

async function charges(messageId: string): Promise<{ meter: string; units: number }[]> {
  return h.services.db.query(
    'SELECT meter, units::int AS units FROM charges WHERE resource_id = $1 ORDER BY meter DESC',
    [messageId],
  );
}

async function messagesOfTeam(t: TestTeam = team): Promise<number> {
  const rows: { n: number }[] = await h.services.db.query(
    'SELECT count(*)::int AS n FROM messages WHERE team_id = $1',
    [t.teamId],
  );
  return rows[0]!.n;
}

describe('POST /endpoints/{id}/test', () => {
  it('answers 202 with a svc.test message of origin test, default payload {"test":true}, charged twice', async () => {
    const { id } = await endpoint();
    const r = await post(h, `/endpoints/${id}/test`, {});
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({
      id: expect.stringMatching(/^wdm_/),
      tenant_id: tenantId,
      event_type: 'svc.test',
      origin: 'test',
      status: 'queued',
      body_bytes: '{"test":true}'.length,
      body_sha256: sha256('{"test":true}'),
      content_type: 'application/json',
      delivery_counts: { queued: 1, succeeded: 0 },
      price: { ingest_units: 1, delivery_units: 1, total_usd: '0.00006' },
    });
    expect(await charges(r.json.id)).toEqual([
      { meter: 'webhooks.ingest_64k', units: 1 },
      { meter: 'webhooks.delivery_16k', units: 1 },
    ]);
    const read = await h.request('GET', `/messages/${r.json.id}`);
    expect(read.json).toEqual(r.json);
    const deliveries = await h.services.db.query('SELECT endpoint_id FROM deliveries WHERE message_id = $1', [
      r.json.id,
    ]);
    expect(deliveries).toEqual([{ endpoint_id: id }]);
  });

  it("skips the endpoint's event types, filter and transform; the payload keeps its exact bytes", async () => {
    const { id } = await endpoint({
      events: ['invoice.*'],
      filter: { path: '/amount', op: 'gt', value: 100 },
      transform: { fields: [{ name: 'only', value: 1 }] },
    });
    const payload = '{ "amount" : 1.50e1, "note": "caf\\u00e9" }';
    const r = await h.request('POST', `/endpoints/${id}/test`, {
      idempotencyKey: uniqueKey(),
      body: `{"payload": ${payload}}`,
      raw: true,
    });
    expect(r.status, r.text).toBe(202);
    const minified = '{"amount":1.50e1,"note":"caf\\u00e9"}';
    expect(r.json.body_sha256).toBe(sha256(minified));
    const content = await h.services.db.query('SELECT body FROM message_contents WHERE message_id = $1', [r.json.id]);
    expect(content[0].body.toString('utf8')).toBe(minified);
    const delivery = await h.services.db.query('SELECT body FROM deliveries WHERE message_id = $1', [r.json.id]);
    expect(delivery).toEqual([{ body: null }]);
  });

  it('refuses a paused or disabled endpoint with 409 invalid_state, stores and charges nothing, never resumes', async () => {
    const paused = await endpoint({ status: 'paused' });
    const disabled = await endpoint();
    await h.services.db.query(
      `UPDATE endpoints SET status = 'disabled', disabled_reason = 'endpoint_gone', version = version + 1 WHERE id = $1`,
      [disabled.id],
    );
    const before = await messagesOfTeam();
    for (const { id } of [paused, disabled]) {
      const r = await post(h, `/endpoints/${id}/test`, {});
      expect(r.status).toBe(409);
      expect(r.json.error.code).toBe('invalid_state');
    }
    expect(await messagesOfTeam()).toBe(before);
    expect((await h.request('GET', `/endpoints/${paused.id}`)).json.status).toBe('paused');
    expect((await h.request('GET', `/endpoints/${disabled.id}`)).json.status).toBe('disabled');
  });

  it('is idempotent: {} and the default payload are one request; a replay costs nothing', async () => {
    const { id } = await endpoint();
    const key = uniqueKey();
    const first = await h.request('POST', `/endpoints/${id}/test`, { idempotencyKey: key, body: {} });
    const again = await h.request('POST', `/endpoints/${id}/test`, {
      idempotencyKey: key,
      body: { payload: { test: true } },
    });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.json.id).toBe(first.json.id);
    const other = await h.request('POST', `/endpoints/${id}/test`, {
      idempotencyKey: key,
      body: { payload: { test: false } },
    });
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('idempotency_conflict');
    expect(await charges(first.json.id)).toHaveLength(2);
    const missingKey = await h.request('POST', `/endpoints/${id}/test`, { body: {} });
    expect(missingKey.json.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
  });

  it("answers 404 for a missing or another team's endpoint and 422 for unknown fields", async () => {
    const { id } = await endpoint();
    const intruder = await h.newTeam('intruder');
    const foreign = await post(h, `/endpoints/${id}/test`, {}, { key: intruder.key });
    expect(foreign.status).toBe(404);
    expect((await post(h, '/endpoints/wde_missing/test', {})).status).toBe(404);
    const unknown = await post(h, `/endpoints/${id}/test`, { payload: 1, event_type: 'invoice.paid' });
    expect(unknown.json.error).toMatchObject({ code: 'invalid_field', field: 'event_type' });
  });

  it('needs a payment card (402 billing_required)', async () => {
    const poor = await h.newTeam('poor');
    await h.services.teams.setPaymentCard(poor.teamId, false);
    const tenant = await post(h, '/tenants', { external_id: 'p', name: 'P' }, { key: poor.key });
    const created = await post(
      h,
      '/endpoints',
      { tenant_id: tenant.json.id, url: 'https://receiver.example.com/p' },
      { key: poor.key },
    );
    const r = await post(h, `/endpoints/${created.json.id}/test`, {}, { key: poor.key });
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('billing_required');
    expect(await messagesOfTeam(poor)).toBe(0);
  });
});
