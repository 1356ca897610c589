import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, HOUR, REDACTION_VACUUM_AFTER_MS } from '@svc/core';
import { post, startHarness, uniqueKey, type Harness } from '../testing/harness.js';

/**
 * GET /messages, GET /messages/{id}/content, cancel and redact, and the delivery reads, through REST without a
 * worker: deliveries stay queued or scheduled here (tests with the engine are in apps/worker/src/delivery).
 */
let h: Harness;
let tenantId: string;
let otherTenantId: string;
let endpointId: string;
let transformedEndpointId: string;

const get = (path: string) => h.request('GET', path);

/** Publishes, then moves the clock on a millisecond: created_before (default now) is exclusive. */
async function publish(body: Record<string, unknown>): Promise<string> {
  const r = await post(h, '/messages', { tenant_id: tenantId, event_type: 'inspect.event', ...body });
  expect(r.status, r.text).toBe(202);
  h.clock.advance(1);
  return r.json.id;
}

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  tenantId = (await post(h, '/tenants', { external_id: 'inspect', name: 'Inspect' })).json.id;
  otherTenantId = (await post(h, '/tenants', { external_id: 'other', name: 'Other' })).json.id;
  await post(h, '/event_types', { name: 'inspect.event' });
  await post(h, '/event_types', { name: 'inspect.other' });
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/a' })).json.id;
  transformedEndpointId = (
    await post(h, '/endpoints', {
      tenant_id: tenantId,
      url: 'https://receiver.example.com/b',
      transform: { fields: [{ name: 'wrapped', from: '/order', required: false }] },
    })
  ).json.id;
});
afterAll(async () => {
  await h.close();
});

describe('GET /messages', () => {
  it('lists the window oldest first, without bodies, with every filter and cursor paging', async () => {
    h.clock.advance(HOUR);
    const start = h.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1000);
      ids.push(await publish({ payload: { order: i }, external_id: i % 2 === 0 ? 'even' : 'odd' }));
    }
    h.clock.advance(1000);
    const other = await post(h, '/messages', { tenant_id: otherTenantId, event_type: 'inspect.other', payload: 1 });
    expect(other.status).toBe(202);
    h.clock.advance(1);

    const after = encodeURIComponent(start.toISOString());
    const first = await get(`/messages?created_after=${after}&tenant_id=${tenantId}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.json.data.map((m: { id: string }) => m.id)).toEqual(ids.slice(0, 2));
    expect(first.json.data[0]).not.toHaveProperty('payload');
    expect(first.json.data[0]).not.toHaveProperty('body');
    expect(first.json.data[0].delivery_counts.queued).toBe(2);
    const second = await get(
      `/messages?created_after=${after}&tenant_id=${tenantId}&limit=2&cursor=${first.json.next_cursor}`,
    );
    expect(second.json.data.map((m: { id: string }) => m.id)).toEqual(ids.slice(2, 4));
    const third = await get(
      `/messages?created_after=${after}&tenant_id=${tenantId}&limit=2&cursor=${second.json.next_cursor}`,
    );
    expect(third.json.data.map((m: { id: string }) => m.id)).toEqual(ids.slice(4));
    expect(third.json.next_cursor).toBeNull();

    const even = await get(`/messages?created_after=${after}&external_id=even`);
    expect(even.json.data.map((m: { id: string }) => m.id)).toEqual([ids[0], ids[2], ids[4]]);
    const byType = await get(`/messages?created_after=${after}&event_type=inspect.other`);
    expect(byType.json.data.map((m: { id: string }) => m.id)).toEqual([other.json.id]);
    const before = encodeURIComponent(new Date(start.getTime() + 2500).toISOString());
    const window = await get(`/messages?created_after=${after}&created_before=${before}`);
    expect(window.json.data.map((m: { id: string }) => m.id)).toEqual(ids.slice(0, 2));
    const bySource = await get(`/messages?created_after=${after}&source_id=wds_00000000000000000000000000`);
    expect(bySource.json.data).toEqual([]);
  });

  it('applies the status filter within each page: a short page can still have a next cursor', async () => {
    h.clock.advance(HOUR);
    const start = h.clock.now();
    const scheduledAt = new Date(start.getTime() + DAY).toISOString();
    const queued1 = await publish({ payload: 1 });
    h.clock.advance(1000);
    const scheduled = await publish({ payload: 2, deliver_at: scheduledAt });
    h.clock.advance(1000);
    const queued2 = await publish({ payload: 3 });
    const after = encodeURIComponent(start.toISOString());
    const page1 = await get(`/messages?created_after=${after}&status=queued&limit=2`);
    expect(page1.json.data.map((m: { id: string }) => m.id)).toEqual([queued1]);
    expect(page1.json.next_cursor).not.toBeNull();
    const page2 = await get(`/messages?created_after=${after}&status=queued&limit=2&cursor=${page1.json.next_cursor}`);
    expect(page2.json.data.map((m: { id: string }) => m.id)).toEqual([queued2]);
    expect(page2.json.next_cursor).toBeNull();
    const sched = await get(`/messages?created_after=${after}&status=scheduled`);
    expect(sched.json.data.map((m: { id: string; status: string }) => [m.id, m.status])).toEqual([
      [scheduled, 'scheduled'],
    ]);
  });

  it('defaults to the last 30 days and refuses a bad window, a bad status or a foreign cursor with 422', async () => {
    const old = h.clock.now();
    const id = await publish({ payload: 'old' });
    await publish({ payload: 'old too' });
    h.clock.advance(31 * DAY);
    const recent = await get('/messages?limit=200');
    expect(recent.json.data.some((m: { id: string }) => m.id === id)).toBe(false);
    const explicit = await get(
      `/messages?created_after=${encodeURIComponent(old.toISOString())}&created_before=${encodeURIComponent(new Date(old.getTime() + DAY).toISOString())}&limit=1`,
    );
    expect(explicit.json.data[0].id).toBe(id);

    const at = (ms: number) => encodeURIComponent(new Date(old.getTime() + ms).toISOString());
    const cases: [string, string][] = [
      [`/messages?created_after=${at(0)}&created_before=${at(30 * DAY + 1)}`, 'created_after'],
      [`/messages?created_after=${at(DAY)}&created_before=${at(DAY)}`, 'created_after'],
      ['/messages?created_after=yesterday', 'created_after'],
      ['/messages?status=lost', 'status'],
      ['/messages?limit=0', 'limit'],
      ['/messages?tenant_id=not-an-id', 'tenant_id'],
    ];
    for (const [path, field] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(422);
      expect(r.json.error, path).toMatchObject({ code: 'invalid_field', field });
    }
    const page = await get(`/messages?created_after=${at(0)}&created_before=${at(DAY)}&limit=1`);
    expect(page.json.next_cursor).not.toBeNull();
    const foreign = await get(
      `/messages?created_after=${at(1)}&created_before=${at(DAY)}&limit=1&cursor=${page.json.next_cursor}`,
    );
    expect(foreign.status).toBe(422);
    expect(foreign.json.error.code).toBe('invalid_cursor');
  });
});

describe('GET /messages/{id}/content', () => {
  it('answers the accepted bytes with the content type: JSON minified as sent, binary as decoded', async () => {
    const json = await post(
      h,
      '/messages',
      `{"tenant_id":"${tenantId}","event_type":"inspect.event","payload":{ "b": 1, "a": [1.50, "x\\u00e9"] }}`,
      { raw: true, headers: { 'content-type': 'application/json' } },
    );
    expect(json.status, json.text).toBe(202);
    h.clock.advance(1);
    const content = await h.request('GET', `/messages/${json.json.id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('application/json');
    expect(content.text).toBe('{"b":1,"a":[1.50,"x\\u00e9"]}');

    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const binary = await publish({
      body_base64: bytes.toString('base64'),
      content_type: 'application/octet-stream',
      endpoint_ids: [endpointId],
    });
    const raw = await fetchRaw(`/messages/${binary}/content`);
    expect(raw.type).toBe('application/octet-stream');
    expect(raw.body.equals(bytes)).toBe(true);
  });

  it("answers 404 for another team's message", async () => {
    const id = await publish({ payload: 1 });
    const intruder = await h.newTeam('intruder');
    const r = await h.request('GET', `/messages/${id}/content`, { key: intruder.key });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('not_found');
  });
});

/** GET with the raw bytes kept (the harness decodes text). */
async function fetchRaw(path: string): Promise<{ type: string | null; body: Buffer }> {
  const r = await h.request('GET', path);
  expect(r.status, r.text).toBe(200);
  const direct = await fetch(`${h.baseUrl}${path}`, { headers: { authorization: `Bearer ${h.team.key}` } });
  return { type: direct.headers.get('content-type'), body: Buffer.from(await direct.arrayBuffer()) };
}

describe('POST /messages/{id}/cancel', () => {
  it('cancels the original deliveries no attempt holds; repeating has no new effect; nothing refunded', async () => {
    const id = await publish({
      payload: { order: 1 },
      deliver_at: new Date(h.clock.now().getTime() + HOUR).toISOString(),
    });
    const charged = await chargesOf(id);
    const key = uniqueKey();
    const first = await post(h, `/messages/${id}/cancel`, {}, { idempotencyKey: key });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ message_id: id, canceled_count: 2, in_flight_count: 0, already_terminal_count: 0 });
    const replayed = await post(h, `/messages/${id}/cancel`, {}, { idempotencyKey: key });
    expect(replayed.headers.get('idempotency-replayed')).toBe('true');
    expect(replayed.json).toEqual(first.json);
    const again = await post(h, `/messages/${id}/cancel`, {});
    expect(again.json).toEqual({ message_id: id, canceled_count: 0, in_flight_count: 0, already_terminal_count: 2 });

    const message = await get(`/messages/${id}`);
    expect(message.json.status).toBe('canceled');
    expect(message.json.delivery_counts.canceled).toBe(2);
    expect(await chargesOf(id)).toBe(charged);
    const deliveries = await get(`/deliveries?message_id=${id}`);
    expect(deliveries.json.data.map((d: { status: string; last_error: string }) => [d.status, d.last_error])).toEqual([
      ['canceled', 'message_canceled'],
      ['canceled', 'message_canceled'],
    ]);
    // The queue counters went down with them.
    const endpoint = await get(`/endpoints/${endpointId}`);
    const pending = await h.services.db.query(
      `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status IN ('queued', 'retry_wait', 'in_flight')`,
      [endpointId],
    );
    expect(endpoint.json.queued_count).toBe(pending[0].n);
  });

  it('answers 404 for an unknown or foreign message and 422 for a body with fields', async () => {
    expect((await post(h, '/messages/wdm_00000000000000000000000000/cancel', {})).status).toBe(404);
    const id = await publish({ payload: 1 });
    const r = await post(h, `/messages/${id}/cancel`, { refund: true });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('invalid_field');
  });
});

async function chargesOf(resourceId: string): Promise<string> {
  const rows = await h.services.db.query(
    'SELECT coalesce(sum(amount_micros), 0)::text AS total FROM charges WHERE resource_id = $1',
    [resourceId],
  );
  return rows[0].total;
}

async function storedContentBytes(): Promise<number> {
  const rows = await h.services.db.query(
    'SELECT coalesce(sum(content_bytes), 0)::int AS n FROM team_queue_counts WHERE team_id = $1',
    [h.team.teamId],
  );
  return rows[0].n;
}

/**
 * One run of the redaction sweep, then the clock an hour on: a redaction it found provable but autovacuum has not
 * covered gets its own VACUUM on the next run.
 */
async function sweepUntilVacuumed(): Promise<number> {
  const completed = await h.services.retention.completeRedactions();
  h.clock.advance(REDACTION_VACUUM_AFTER_MS);
  return completed;
}

/**
 * Runs the sweep until this message's redaction is complete: a sweep that completes some redaction may complete an
 * earlier test's, not this one.
 */
async function sweepUntilComplete(id: string): Promise<string> {
  await sweepUntilVacuumed();
  return (await get(`/messages/${id}`)).json.redaction_status as string;
}

/** Completed manual VACUUMs (not autovacuum) of the tables a redaction rewrites and of their TOAST tables. */
/** Manual vacuums of the three tables' partitions (migration 0041: vacuums count per partition) and TOAST tables. */
async function manualVacuums(): Promise<number> {
  return (await vacuumStats())[0]!.n;
}

/** How many relations one VACUUM of the three tables processes: each partition and its TOAST table. */
async function vacuumedRelations(): Promise<number> {
  return (await vacuumStats())[0]!.relations;
}

function vacuumStats(): Promise<{ n: number; relations: number }[]> {
  return h.services.db.query(
    `SELECT sum(s.vacuum_count)::int AS n, count(*)::int AS relations
       FROM unnest(ARRAY['messages', 'message_contents', 'deliveries']::regclass[]) AS t(oid)
       CROSS JOIN LATERAL pg_partition_tree(t.oid) AS p
       JOIN pg_class c ON c.oid = p.relid
       JOIN pg_stat_all_tables s ON s.relid IN (c.oid, c.reltoastrelid)
      WHERE p.isleaf`,
  );
}

/** Redacts a message and runs the sweep until it has noted the tables' vacuum counts (the redaction is provable). */
async function redactAndNote(payload: unknown): Promise<string> {
  const id = await publish({ payload });
  await post(h, `/messages/${id}/redact`, {});
  await expect
    .poll(
      async () => {
        await h.services.retention.completeRedactions();
        const rows = await h.services.db.query('SELECT redaction_vacuum_baseline FROM messages WHERE id = $1', [id]);
        return rows[0].redaction_vacuum_baseline !== null;
      },
      { timeout: 15_000 },
    )
    .toBe(true);
  return id;
}

describe('POST /messages/{id}/redact', () => {
  it('erases the body and every transformed copy at once, cancels pending deliveries, keeps metadata and charges', async () => {
    const id = await publish({ payload: { order: { secret: 'card-4242' } }, metadata: { case: 'gdpr' } });
    const charged = await chargesOf(id);
    const storedBefore = await storedContentBytes();
    expect((await get(`/messages/${id}`)).json.body_sha256).toMatch(/^[0-9a-f]{64}$/);
    const r = await post(h, `/messages/${id}/redact`, {});
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ message_id: id, status: 'redacting', redacted_at: h.clock.now().toISOString() });

    const content = await get(`/messages/${id}/content`);
    expect(content.status).toBe(410);
    expect(content.json.error.code).toBe('payload_expired');
    const message = await get(`/messages/${id}`);
    expect(message.status).toBe(200);
    expect(message.json).toMatchObject({
      redacted: true,
      redaction_status: 'redacting',
      content_available: false,
      metadata: { case: 'gdpr' },
      status: 'canceled',
      // The body's hash goes with the body: for a guessable body (a card number) it would confirm a guess.
      body_sha256: null,
    });
    expect(await chargesOf(id)).toBe(charged);
    const stored = await h.services.db.query(
      `SELECT (SELECT body FROM message_contents WHERE message_id = $1) AS body,
              (SELECT body_sha256 FROM messages WHERE id = $1) AS hash,
              (SELECT count(*)::int FROM deliveries WHERE message_id = $1 AND body IS NOT NULL) AS copies,
              (SELECT count(*)::int FROM deliveries WHERE message_id = $1 AND endpoint_id = $2) AS transformed`,
      [id, transformedEndpointId],
    );
    expect(stored[0]).toEqual({ body: null, hash: null, copies: 0, transformed: 1 });
    // The message body and the transformed copy no longer count against the team's stored content.
    const freed =
      Buffer.byteLength('{"order":{"secret":"card-4242"}}') + Buffer.byteLength('{"wrapped":{"secret":"card-4242"}}');
    expect(storedBefore - (await storedContentBytes())).toBe(freed);

    const again = await post(h, `/messages/${id}/redact`, {});
    expect(again.status).toBe(202);
    expect(again.json.redacted_at).toBe(r.json.redacted_at);
  });

  it('is completed by the retention sweep once no snapshot can still see the old bytes', async () => {
    const id = await publish({ payload: { pii: true } });
    const reader = await h.services.db.createQueryRunner();
    await reader.connect();
    try {
      // A transaction whose snapshot predates the redaction could still read the old row versions.
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await reader.query('SELECT count(*) FROM messages');
      await post(h, `/messages/${id}/redact`, {});
      await h.services.retention.completeRedactions();
      expect((await get(`/messages/${id}`)).json.redaction_status).toBe('redacting');
      const seen = await reader.query('SELECT body FROM message_contents WHERE message_id = $1', [id]);
      expect(seen[0].body).not.toBeNull();
      await reader.query('COMMIT');
    } finally {
      await reader.release();
    }
    // Write transactions anywhere in the cluster (other test files' databases) hold it back too, briefly.
    await expect.poll(() => sweepUntilComplete(id), { timeout: 15_000 }).toBe('complete');
    const done = await get(`/messages/${id}`);
    expect(done.json).toMatchObject({ redacted: true, redaction_status: 'complete', content_available: false });
  });

  it('is not held back by a snapshot open in another database of the cluster (it cannot see these rows)', async () => {
    const id = await publish({ payload: { pii: 'elsewhere' } });
    const elsewhere = new pg.Client({ connectionString: otherDatabaseUrl(h.databaseUrl) });
    await elsewhere.connect();
    try {
      await elsewhere.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await elsewhere.query('SELECT count(*) FROM pg_class');
      await post(h, `/messages/${id}/redact`, {});
      // Other test files' write transactions hold it back for moments; the open snapshot here never ends in time.
      await expect.poll(() => sweepUntilComplete(id), { timeout: 15_000 }).toBe('complete');
      // The snapshot was open all along.
      const open: { snapshots: number }[] = await h.services.db.query(
        `SELECT count(*)::int AS snapshots FROM pg_stat_activity WHERE datname = 'postgres' AND backend_xmin IS NOT NULL`,
      );
      expect(open[0]?.snapshots).toBeGreaterThanOrEqual(1);
    } finally {
      await elsewhere.query('ROLLBACK');
      await elsewhere.end();
    }
  });
});

describe('redaction completion at volume: no VACUUM of whole tables every run', () => {
  it('completes through vacuums it did not run (autovacuum): two of each table since the redaction became provable', async () => {
    const id = await redactAndNote({ card: '4242 4242 4242 4242' });
    const before = await manualVacuums();
    // Runs within the hour after the note neither vacuum nor complete (the old sweep vacuumed both tables each run).
    h.clock.advance(REDACTION_VACUUM_AFTER_MS - 60_000);
    expect(await h.services.retention.completeRedactions()).toBe(0);
    expect(await manualVacuums()).toBe(before);
    expect((await get(`/messages/${id}`)).json.redaction_status).toBe('redacting');
    // Two vacuums of each table, as autovacuum runs them: the second one started after the redaction was provable.
    await h.services.db.query('VACUUM messages, message_contents, deliveries');
    expect(await h.services.retention.completeRedactions()).toBe(0);
    await h.services.db.query('VACUUM messages, message_contents, deliveries');
    expect(await h.services.retention.completeRedactions()).toBeGreaterThanOrEqual(1);
    expect(await manualVacuums()).toBe(before + 2 * (await vacuumedRelations()));
    expect((await get(`/messages/${id}`)).json.redaction_status).toBe('complete');
  });

  it('runs one VACUUM itself for a redaction that waited an hour, which completes every provable redaction', async () => {
    const first = await redactAndNote({ n: 1 });
    const second = await redactAndNote({ n: 2 });
    const before = await manualVacuums();
    h.clock.advance(REDACTION_VACUUM_AFTER_MS);
    expect(await h.services.retention.completeRedactions()).toBeGreaterThanOrEqual(2);
    // One VACUUM of the three tables (each partition) and their TOAST tables.
    expect(await manualVacuums()).toBe(before + (await vacuumedRelations()));
    for (const id of [first, second]) expect((await get(`/messages/${id}`)).json.redaction_status).toBe('complete');
    const stored = await h.services.db.query(
      'SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND redaction_vacuum_baseline IS NULL',
      [[first, second]],
    );
    expect(stored[0].n).toBe(2);
  });
});

/** The cluster's `postgres` database, next to the test's own. */
function otherDatabaseUrl(url: string): string {
  const other = new URL(url);
  other.pathname = '/postgres';
  return other.toString();
}

describe('deliveries', () => {
  it('lists deliveries with filters, reads one, and lists its attempts (none yet)', async () => {
    h.clock.advance(HOUR);
    const start = encodeURIComponent(h.clock.now().toISOString());
    const id = await publish({ payload: { order: 7 } });
    h.clock.advance(1000);
    const later = await publish({
      payload: { order: 8 },
      deliver_at: new Date(h.clock.now().getTime() + HOUR).toISOString(),
    });
    const all = await get(`/deliveries?created_after=${start}`);
    expect(all.status).toBe(200);
    expect(all.json.data).toHaveLength(4);
    const one = all.json.data.find(
      (d: { endpoint_id: string; message_id: string }) => d.message_id === id && d.endpoint_id === endpointId,
    );
    expect(one).toMatchObject({
      tenant_id: tenantId,
      event_type: 'inspect.event',
      generation: 0,
      kind: 'original',
      replay_of: null,
      replay_id: null,
      status: 'queued',
      attempt_count: 0,
      transformed: false,
      body_bytes: 11,
      content_type: 'application/json',
      price: { delivery_units: 1, total_usd: '0.00005' },
      finished_at: null,
    });
    const transformed = all.json.data.find(
      (d: { endpoint_id: string; message_id: string }) =>
        d.message_id === id && d.endpoint_id === transformedEndpointId,
    );
    expect(transformed.transformed).toBe(true);
    expect((await get(`/deliveries/${one.id}`)).json).toEqual(one);
    const attempts = await get(`/deliveries/${one.id}/attempts`);
    expect(attempts.json).toEqual({ data: [], next_cursor: null });

    const scheduled = await get(`/deliveries?created_after=${start}&status=scheduled`);
    expect(scheduled.json.data.map((d: { message_id: string }) => d.message_id)).toEqual([later, later]);
    const queued = await get(`/deliveries?created_after=${start}&status=queued&endpoint_id=${endpointId}`);
    expect(queued.json.data.map((d: { id: string }) => d.id)).toEqual([one.id]);
    const paged = await get(`/deliveries?created_after=${start}&limit=3`);
    const rest = await get(`/deliveries?created_after=${start}&limit=3&cursor=${paged.json.next_cursor}`);
    expect([...paged.json.data, ...rest.json.data].map((d: { id: string }) => d.id)).toEqual(
      all.json.data.map((d: { id: string }) => d.id),
    );
    expect((await get(`/deliveries?created_after=${start}&tenant_id=${otherTenantId}`)).json.data).toEqual([]);
    expect((await get(`/deliveries?created_after=${start}&kind=replay`)).json.data).toEqual([]);
    expect((await get(`/deliveries?created_after=${start}&status=failed`)).json.data).toEqual([]);
    const bad = await get('/deliveries?status=dead');
    expect(bad.status).toBe(422);
    expect(bad.json.error).toMatchObject({ code: 'invalid_field', field: 'status' });
  });

  it('refuses retry_now and replay of a pending delivery with 409 invalid_state', async () => {
    const id = await publish({ payload: 1 });
    const [delivery] = (await get(`/deliveries?message_id=${id}`)).json.data;
    const retry = await post(h, `/deliveries/${delivery.id}/retry_now`, {});
    expect(retry.status).toBe(409);
    expect(retry.json.error.code).toBe('invalid_state');
    const replay = await post(h, `/deliveries/${delivery.id}/replay`, {});
    expect(replay.status).toBe(409);
    expect(replay.json.error.code).toBe('invalid_state');
    const badConfig = await post(h, `/deliveries/${delivery.id}/replay`, { configuration: 'latest' });
    expect(badConfig.status).toBe(422);
    expect(badConfig.json.error.field).toBe('configuration');
    expect((await post(h, '/deliveries/wdd_00000000000000000000000000/replay', {})).status).toBe(404);
  });
});
