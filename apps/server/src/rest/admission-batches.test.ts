import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_SLOTS, CreateMessageInput, parseInput, RawJson, ServiceError } from '@svc/core';
import { countRoundTrips } from '@svc/db';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness, type TestTeam } from '../testing/harness.js';

// Concurrent admissions of this process share one transaction per batch (docs/admission.md). Small queue limits so
// the exact-limit races are quick to reach.
const MAX_PENDING = 10;
const MAX_CONTENT_BYTES = 2_000;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ limits: { max_pending_deliveries: MAX_PENDING, max_content_bytes: MAX_CONTENT_BYTES } });
});
afterAll(async () => {
  await h.close();
});

interface Publisher {
  team: TestTeam;
  tenantId: string;
}

/** A team with a payment card, a tenant, the event type `batch.event` and `endpoints` endpoints. */
async function publisher(name: string, endpoints = 1): Promise<Publisher> {
  const team = await h.newTeam(name);
  await h.services.teams.setPaymentCard(team.teamId, true);
  const tenant = await post(h, '/tenants', { external_id: name, name }, { key: team.key });
  await post(h, '/event_types', { name: 'batch.event' }, { key: team.key });
  for (let i = 0; i < endpoints; i += 1)
    await post(
      h,
      '/endpoints',
      { tenant_id: tenant.json.id, url: `https://example.com/${name}/${i}` },
      { key: team.key },
    );
  return { team, tenantId: tenant.json.id as string };
}

function publish(p: Publisher, body: Record<string, unknown> = {}, options: { key?: string } = {}) {
  return post(
    h,
    '/messages',
    { tenant_id: p.tenantId, event_type: 'batch.event', payload: { n: 1 }, ...body },
    { key: options.key ?? p.team.key },
  );
}

async function storedMessages(teamId: string): Promise<number> {
  const [row] = await h.services.db.query('SELECT count(*)::int AS n FROM messages WHERE team_id = $1', [teamId]);
  return row.n as number;
}

/** The same admission through the service in a transaction of its own (as another server process would). */
async function admitAlone(p: Publisher, payload: string): Promise<'admitted' | string> {
  const input = parseInput(CreateMessageInput, {
    tenant_id: p.tenantId,
    event_type: 'batch.event',
    payload: new RawJson(payload),
  });
  try {
    await h.services.messages.admitMessage({ actor: p.team }, input, { origin: 'api' });
    return 'admitted';
  } catch (error) {
    if (error instanceof ServiceError) return error.code;
    throw error;
  }
}

const codeOf = (r: ApiResponse) => (r.status === 202 ? 'admitted' : (r.json?.error?.code as string));

describe('admission batches', () => {
  it('answers each request of a batch on its own: refusals and a failing request do not fail the others', async () => {
    const main = await publisher('neighbours', 2);
    const other = await publisher('neighbours-other');
    const capped = await h.services.teams.createKey(other.team.teamId, { spendingLimitMicros: 1n });
    // Keys and rate tokens at hand, as under load, so that the requests below share batches.
    for (const p of [main, other]) expect((await publish(p)).status).toBe(202);
    // A message Postgres refuses only when the batch writes it, standing for any failure validation cannot foresee
    // (the API refuses the NUL that used to play this part before anything is written).
    await h.services.db.query(`CREATE FUNCTION refuse_marked_message() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.metadata->>'note' = 'refused by postgres' THEN RAISE EXCEPTION 'refused by a test trigger'; END IF;
        RETURN NEW;
      END $$`);
    await h.services.db.query(
      'CREATE TRIGGER refuse_marked_message BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse_marked_message()',
    );
    const responses = await Promise.all([
      publish(main),
      publish(main, { tenant_id: 'wdt_unknown' }),
      publish(main),
      publish(main, { event_type: 'not.in.catalog' }),
      publish(main),
      publish(other, {}, { key: capped.secret }),
      publish(other),
      // Postgres refuses this message only when the batch writes it: the batch fails as a whole and every request
      // runs again alone.
      publish(other, { metadata: { note: 'refused by postgres' } }),
      publish(other),
    ]);
    await h.services.db.query('DROP TRIGGER refuse_marked_message ON messages');
    expect(responses.map(codeOf)).toEqual([
      'admitted',
      'invalid_field',
      'admitted',
      'invalid_event_type',
      'admitted',
      'spending_limit',
      'admitted',
      'internal_error',
      'admitted',
    ]);
    expect(responses[1]!.json.error.field).toBe('tenant_id');
    expect(responses[5]!.status).toBe(402);
    expect(await storedMessages(main.team.teamId)).toBe(1 + 3);
    expect(await storedMessages(other.team.teamId)).toBe(1 + 2);
    // Every admitted message has its deliveries (two for the first team, one for the other), each with its queue row.
    const [queued] = await h.services.db.query(
      `SELECT count(*)::int AS deliveries, count(q.delivery_id)::int AS queued
         FROM deliveries d LEFT JOIN delivery_queue q ON q.delivery_id = d.id WHERE d.team_id = ANY($1)`,
      [[main.team.teamId, other.team.teamId]],
    );
    expect(queued).toEqual({ deliveries: 4 * 2 + 3, queued: 4 * 2 + 3 });
  });

  it('admits exactly up to max_pending_deliveries when the last admissions race, in batches and alone', async () => {
    const p = await publisher('pending-race');
    for (let i = 0; i < MAX_PENDING - 3; i += 1) expect((await publish(p)).status).toBe(202);
    // Room for 3 more: 2 through the API (a batch) and 2 in transactions of their own, all at once. Four racers, as
    // many as the team's admission slots (ADMISSION_SLOTS): a fifth at once would be refused for its slot first (429
    // too_many_concurrent_requests), whenever the timing let it overlap the other four.
    expect(ADMISSION_SLOTS).toBe(4);
    const outcomes = await Promise.all([
      ...Array.from({ length: 2 }, () => publish(p).then(codeOf)),
      ...Array.from({ length: 2 }, () => admitAlone(p, '{"n":1}')),
    ]);
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(3);
    expect(outcomes.filter((o) => o !== 'admitted')).toEqual(['queue_full']);
    const [pending] = await h.services.db.query(
      `SELECT sum(pending)::int AS n FROM team_queue_counts WHERE team_id = $1`,
      [p.team.teamId],
    );
    expect(pending.n).toBe(MAX_PENDING);
  });

  it('admits exactly up to max_content_bytes when the last admissions race, in batches and alone', async () => {
    // No endpoint: only the stored bodies count. Each body is 200 bytes.
    const p = await publisher('bytes-race', 0);
    const payload = JSON.stringify({ pad: 'x'.repeat(190) });
    expect(Buffer.byteLength(payload)).toBe(200);
    const fill = MAX_CONTENT_BYTES / 200 - 3;
    for (let i = 0; i < fill; i += 1) expect((await publish(p, { payload: JSON.parse(payload) })).status).toBe(202);
    const outcomes = await Promise.all([
      ...Array.from({ length: 2 }, () => publish(p, { payload: JSON.parse(payload) }).then(codeOf)),
      ...Array.from({ length: 2 }, () => admitAlone(p, payload)),
    ]);
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(3);
    expect(outcomes.filter((o) => o !== 'admitted')).toEqual(['queue_full']);
    expect(await storedMessages(p.team.teamId)).toBe(fill + 3);
  });

  it('two requests with one Idempotency-Key at once: one admits, the other replays it after the commit', async () => {
    const p = await publisher('twins');
    const key = uniqueKey();
    const body = { tenant_id: p.tenantId, event_type: 'batch.event', payload: { twin: true } };
    const [a, b] = await Promise.all([
      h.request('POST', '/messages', { key: p.team.key, idempotencyKey: key, body }),
      h.request('POST', '/messages', { key: p.team.key, idempotencyKey: key, body }),
    ]);
    expect([a!.status, b!.status]).toEqual([202, 202]);
    expect(a!.json.id).toBe(b!.json.id);
    const replayed = [a!, b!].map((r) => r.headers.get('idempotency-replayed'));
    expect(replayed.filter((header) => header === 'true')).toHaveLength(1);
    expect(replayed.filter((header) => header === null)).toHaveLength(1);
    expect(a!.text).toBe(b!.text);
    expect(await storedMessages(p.team.teamId)).toBe(1);
  });

  it('two requests with one Idempotency-Key and different bodies at once: one admits, the other conflicts', async () => {
    const p = await publisher('twins-conflict');
    const key = uniqueKey();
    const send = (n: number) =>
      h.request('POST', '/messages', {
        key: p.team.key,
        idempotencyKey: key,
        body: { tenant_id: p.tenantId, event_type: 'batch.event', payload: { n } },
      });
    const responses = await Promise.all([send(1), send(2)]);
    expect(responses.map(codeOf).sort()).toEqual(['admitted', 'idempotency_conflict']);
    expect(responses.find((r) => r.status === 409)!.json.error.code).toBe('idempotency_conflict');
    expect(await storedMessages(p.team.teamId)).toBe(1);
  });

  it('a refused request leaves its key unused inside a batch; the corrected retry admits', async () => {
    const p = await publisher('key-reuse');
    const key = uniqueKey();
    const [refused, neighbour] = await Promise.all([
      h.request('POST', '/messages', {
        key: p.team.key,
        idempotencyKey: key,
        body: { tenant_id: p.tenantId, event_type: 'not.in.catalog', payload: 1 },
      }),
      publish(p),
    ]);
    expect(codeOf(refused!)).toBe('invalid_event_type');
    expect(neighbour!.status).toBe(202);
    const retried = await h.request('POST', '/messages', {
      key: p.team.key,
      idempotencyKey: key,
      body: { tenant_id: p.tenantId, event_type: 'batch.event', payload: 1 },
    });
    expect(retried.status).toBe(202);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
  });

  it('endpoint_ids in one batch: each request is checked against its own tenant', async () => {
    const p = await publisher('named', 1);
    const second = await post(h, '/tenants', { external_id: 'named-2', name: 'Second' }, { key: p.team.key });
    const endpoint = await post(
      h,
      '/endpoints',
      { tenant_id: second.json.id, url: 'https://example.com/named-2' },
      { key: p.team.key },
    );
    // The team's key and rate tokens are at hand, as under load, so both requests reach the same batch.
    expect((await publish(p)).status).toBe(202);
    const [foreign, own] = await Promise.all([
      publish(p, { endpoint_ids: [endpoint.json.id] }),
      publish({ team: p.team, tenantId: second.json.id as string }, { endpoint_ids: [endpoint.json.id] }),
    ]);
    expect(foreign!.status).toBe(422);
    expect(foreign!.json.error).toMatchObject({ code: 'invalid_field', field: 'endpoint_ids' });
    expect(own!.status, own!.text).toBe(202);
    const deliveries = await h.services.db.query('SELECT endpoint_id FROM deliveries WHERE message_id = $1', [
      own!.json.id,
    ]);
    expect(deliveries).toEqual([{ endpoint_id: endpoint.json.id }]);
  });

  it("sees every change of a tenant's endpoints at once, whoever makes it (the cache follows their version)", async () => {
    const p = await publisher('cached', 2);
    const deliveredTo = async (messageId: string) =>
      (
        (await h.services.db.query('SELECT endpoint_id FROM deliveries WHERE message_id = $1 ORDER BY endpoint_id', [
          messageId,
        ])) as { endpoint_id: string }[]
      ).map((row) => row.endpoint_id);
    const first = await publish(p, { payload: { kind: 'a' } });
    const endpoints = await deliveredTo(first.json.id);
    expect(endpoints).toHaveLength(2);
    // Another process (or the engine) changes the endpoints behind this one's back: a filter, then a disable.
    await h.services.db.query(`UPDATE endpoints SET filter = $2, version = version + 1 WHERE id = $1`, [
      endpoints[0],
      '{"path":"/kind","op":"eq","value":"b"}',
    ]);
    expect(await deliveredTo((await publish(p, { payload: { kind: 'a' } })).json.id)).toEqual([endpoints[1]]);
    expect(await deliveredTo((await publish(p, { payload: { kind: 'b' } })).json.id)).toEqual(endpoints);
    await h.services.db.query(`UPDATE endpoints SET status = 'disabled', version = version + 1 WHERE id = $1`, [
      endpoints[1],
    ]);
    expect(await deliveredTo((await publish(p, { payload: { kind: 'b' } })).json.id)).toEqual([endpoints[0]]);
  });

  it('refuses a fifth message of one team in one batch with 429 too_many_concurrent_requests', async () => {
    const p = await publisher('five');
    const responses = await Promise.all(Array.from({ length: 5 }, () => publish(p)));
    const codes = responses.map(codeOf);
    // All five share a batch unless the first one started alone: then at most four wait for the next.
    expect(codes.filter((c) => c === 'admitted').length).toBeGreaterThanOrEqual(4);
    for (const r of responses.filter((x) => x.status !== 202)) {
      expect(r.json.error.code).toBe('too_many_concurrent_requests');
      expect(r.headers.get('retry-after')).toBe('1');
    }
  });

  it('keeps every body of a batch byte for byte: bodies go as one binary parameter, each row takes its slice', async () => {
    const p = await publisher('bytes');
    const transforming = await post(
      h,
      '/tenants',
      { external_id: 'bytes-transformed', name: 'Bytes transformed' },
      { key: p.team.key },
    );
    for (const extra of [{}, { transform: { fields: [{ name: 'z', from: '/a' }] } }])
      await post(
        h,
        '/endpoints',
        { tenant_id: transforming.json.id, url: 'https://example.com/bytes', ...extra },
        { key: p.team.key },
      );
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    // Without insignificant whitespace: a payload is stored as written otherwise (numbers keep their digits).
    const utf8 = '{"a":"Zo\u00eb \u2713 \ud83d\ude00","n":[1.50,2e0]}';
    const bodies = [
      { tenant: p.tenantId, body: everyByte, binary: true },
      { tenant: transforming.json.id as string, body: Buffer.from(utf8), binary: false },
      { tenant: p.tenantId, body: Buffer.from([0]), binary: true },
      { tenant: transforming.json.id as string, body: Buffer.from('{"a":"x"}'), binary: false },
    ];
    // One team's admissions of one moment make one batch: one admission statement for all four (checked below).
    const writes = countRoundTrips({ ignoring: /^(?!\s*WITH message AS)/ });
    const admitted = await Promise.all(
      bodies.map(({ tenant, body, binary }) =>
        h.services.admission.admit({
          actor: p.team,
          input: parseInput(CreateMessageInput, {
            tenant_id: tenant,
            event_type: 'batch.event',
            ...(binary
              ? { body_base64: body.toString('base64'), content_type: 'application/octet-stream' }
              : { payload: new RawJson(body.toString('utf8')) }),
          }),
          options: { origin: 'api' },
        }),
      ),
    );
    expect(writes.count).toBe(1);
    writes.close();
    for (const [i, message] of admitted.entries()) {
      const [stored] = await h.services.db.query('SELECT body FROM message_contents WHERE message_id = $1', [
        message.id,
      ]);
      expect((stored.body as Buffer).toString('hex'), `body ${i}`).toBe(bodies[i]!.body.toString('hex'));
    }
    // The transforming endpoint's deliveries keep their own bytes; the other endpoint's keep none (the message's).
    const deliveries = (await h.services.db.query(
      `SELECT d.message_id, d.body, e.transform IS NOT NULL AS transformed
         FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id WHERE d.message_id = ANY ($1)`,
      [admitted.map((m) => m.id)],
    )) as { message_id: string; body: Buffer | null; transformed: boolean }[];
    const of = (i: number, transformed: boolean) =>
      deliveries.find((d) => d.message_id === admitted[i]!.id && d.transformed === transformed)?.body;
    expect(deliveries).toHaveLength(6);
    expect(of(1, true)?.toString('utf8')).toBe('{"z":"Zo\u00eb \u2713 \ud83d\ude00"}');
    expect(of(3, true)?.toString('utf8')).toBe('{"z":"x"}');
    for (const i of [0, 1, 2, 3]) expect(of(i, false)).toBeNull();
  });
});
