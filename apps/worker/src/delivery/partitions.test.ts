import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, idTimeBound, MINUTE, partitionName, utcDay } from '@svc/core';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * The daily partitions of migration 0041 with the real engine and the injectable clock: a message on each side of
 * midnight UTC lands in its day's partition and every read (by ID, lists and their cursors) sees both; an insert
 * beyond the partitions made lands in DEFAULT and the maintenance moves it out; a day past its retention is dropped
 * whole, exactly its rows. One test on the real clock checks that the service's IDs fall in today's bounds.
 */
let stack: DeliveryStack;
beforeAll(async () => {
  // The tests run the maintenance themselves on a clock they move: a scheduled run (every 5 minutes) between their
  // steps would make or drop their partitions first.
  stack = await startDeliveryStack({ service_concurrency: 20 }, { schedules: false });
});
afterAll(async () => {
  await stack.close();
});

const db = () => stack.h.services.db;
const get = (path: string) => stack.h.request('GET', path);

async function partitionOf(table: string, key: string, id: string): Promise<string | undefined> {
  const rows: { p: string }[] = await db().query(
    `SELECT tableoid::regclass::text AS p FROM ${table} WHERE ${key} = $1`,
    [id],
  );
  return rows[0]?.p;
}

async function deliveryOf(messageId: string): Promise<string> {
  const rows: { id: string }[] = await db().query(`SELECT id FROM deliveries WHERE message_id = $1`, [messageId]);
  return rows[0]!.id;
}

async function succeeded(messageId: string): Promise<void> {
  await stack.until(`message ${messageId} delivered`, async () =>
    (await stack.messageStatus(messageId)).status === 'succeeded' ? true : undefined,
  );
}

async function count(table: string): Promise<number> {
  return (await db().query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
}

// A day well past the partitions the migration made (7 days ahead of the real clock).
const day = new Date(utcDay(new Date()).getTime() + 20 * DAY);
const nextDay = new Date(day.getTime() + DAY);

describe('partition bounds on the real clock', () => {
  let real: DeliveryStack;
  beforeAll(async () => {
    // No scheduled maintenance: the statistics test below runs it itself.
    real = await startDeliveryStack({ service_concurrency: 20 }, { realClock: true, schedules: false });
  });
  afterAll(async () => {
    await real.close();
  });

  it("puts the service's IDs in the partition of their time, and SQL and TypeScript bounds agree", async () => {
    const { tenantId } = await real.setup('/today');
    const startedAt = new Date();
    const first = await real.publish(tenantId, { n: 1 });
    const second = await real.publish(tenantId, { n: 2 });
    // IDs are never older than the clock (newId keeps one process's IDs in order, even after a test clock ran ahead).
    expect(first >= idTimeBound('wdm_', utcDay(startedAt))).toBe(true);
    for (const id of [first, second]) {
      const legacy: { b: string | null }[] = await real.h.services.db.query(
        `SELECT legacy_bound AS b FROM time_partitioned_tables WHERE table_name = 'messages'`,
      );
      const day = partitionName('messages', utcDay(idTime(id)));
      const made = (await real.h.services.db.query(`SELECT 1 FROM pg_class WHERE relname = $1`, [day])).length > 0;
      // An earlier test in this process may have run the ID clock past the partitions made: then DEFAULT holds it.
      const expected = legacy[0]!.b !== null && id < legacy[0]!.b ? 'messages_legacy' : made ? day : 'messages_default';
      const rows: { p: string }[] = await real.h.services.db.query(
        `SELECT tableoid::regclass::text AS p FROM messages WHERE id = $1`,
        [id],
      );
      expect(rows[0]!.p).toBe(expected);
      expect((await real.h.request('GET', `/messages/${id}`)).status).toBe(200);
    }
    const page = await real.h.request('GET', `/messages?tenant_id=${tenantId}&limit=1`);
    expect(page.json.data.map((m: { id: string }) => m.id)).toEqual([first]);
    const next = await real.h.request(
      'GET',
      `/messages?tenant_id=${tenantId}&limit=1&cursor=${encodeURIComponent(page.json.next_cursor)}`,
    );
    expect(next.json.data.map((m: { id: string }) => m.id)).toEqual([second]);

    const today = utcDay(startedAt);
    const moments = [today, new Date(today.getTime() + DAY), startedAt, new Date(today.getTime() + DAY - 1)];
    for (const at of moments) {
      const rows: { b: string }[] = await real.h.services.db.query(`SELECT id_time_bound('wdm_', $1) AS b`, [at]);
      expect(rows[0]!.b).toBe(idTimeBound('wdm_', at));
    }
  });

  it('analyses the parents once a day on the real clock: a run within the day leaves them, one after it analyses', async () => {
    const partitions = real.h.services.partitions;
    const analyzedAt = (hoursAgo: number) =>
      real.h.services.db.query(`UPDATE time_partitioned_tables SET analyzed_at = now() - make_interval(hours => $1)`, [
        hoursAgo,
      ]);
    await real.h.services.db.query(`UPDATE time_partitioned_tables SET analyzed_at = NULL`);
    expect((await partitions.analyzeParents()).analyzed).toHaveLength(4);
    expect((await partitions.analyzeParents()).analyzed).toEqual([]);
    await analyzedAt(23);
    expect((await partitions.analyzeParents()).analyzed).toEqual([]);
    await analyzedAt(25);
    expect((await partitions.analyzeParents()).analyzed).toHaveLength(4);
  });
});

describe('daily partitions', () => {
  let before: string;
  let after: string;

  it('puts a message on each side of midnight UTC in its day, and reads and pages across the boundary', async () => {
    stack.h.clock.set(new Date(nextDay.getTime() - 300));
    const made = await stack.h.services.partitions.makeAhead();
    expect(made.created).toContain(partitionName('messages', day));
    expect(made.created).toContain(partitionName('messages', nextDay));
    // The deliveries partitions leave room on each page for the settlement's in-place update (migration 0044).
    const options: { relname: string; reloptions: string[] | null }[] = await db().query(
      `SELECT relname, reloptions FROM pg_class WHERE relname = ANY ($1::text[]) ORDER BY relname`,
      [[partitionName('deliveries', day), partitionName('messages', day)]],
    );
    expect(options).toEqual([
      { relname: partitionName('deliveries', day), reloptions: ['fillfactor=80'] },
      { relname: partitionName('messages', day), reloptions: null },
    ]);
    const { tenantId } = await stack.setup('/midnight');
    before = await stack.publish(tenantId, { side: 'before' });
    await stack.advance(600);
    after = await stack.publish(tenantId, { side: 'after' });
    await succeeded(before);
    await succeeded(after);

    expect(await partitionOf('messages', 'id', before)).toBe(partitionName('messages', day));
    expect(await partitionOf('messages', 'id', after)).toBe(partitionName('messages', nextDay));
    expect(await partitionOf('message_contents', 'message_id', after)).toBe(partitionName('message_contents', nextDay));
    expect(await partitionOf('deliveries', 'id', await deliveryOf(after))).toBe(partitionName('deliveries', nextDay));

    for (const id of [before, after]) {
      const r = await get(`/messages/${id}`);
      expect(r.status, r.text).toBe(200);
      const content = await get(`/messages/${id}/content`);
      expect(content.status, content.text).toBe(200);
    }
    // Newest first, one a page: the second page crosses midnight through the cursor.
    const first = await get(`/messages?tenant_id=${tenantId}&limit=1&order=newest`);
    expect(first.status, first.text).toBe(200);
    expect(first.json.data.map((m: { id: string }) => m.id)).toEqual([after]);
    const second = await get(
      `/messages?tenant_id=${tenantId}&limit=1&order=newest&cursor=${encodeURIComponent(first.json.next_cursor)}`,
    );
    expect(second.status, second.text).toBe(200);
    expect(second.json.data.map((m: { id: string }) => m.id)).toEqual([before]);
    const deliveries = await get(`/deliveries?tenant_id=${tenantId}&limit=200`);
    expect(deliveries.status, deliveries.text).toBe(200);
    expect(deliveries.json.data).toHaveLength(2);

    // A lookup by ID is one index probe in one partition.
    const plan: { 'QUERY PLAN': string }[] = await db().query(`EXPLAIN SELECT * FROM messages WHERE id = '${after}'`);
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain(`${partitionName('messages', nextDay)}_pkey`);
    expect(text).not.toContain('Append');
  });

  it('never loses an insert beyond the partitions made: DEFAULT holds it until the maintenance moves it', async () => {
    const far = new Date(day.getTime() + 40 * DAY + 12 * 60 * MINUTE);
    stack.h.clock.set(far);
    const { tenantId } = await stack.setup('/far');
    const id = await stack.publish(tenantId, { far: true });
    await succeeded(id);
    expect(await partitionOf('messages', 'id', id)).toBe('messages_default');
    expect(await partitionOf('deliveries', 'id', await deliveryOf(id))).toBe('deliveries_default');

    const report = await stack.h.services.partitions.makeAhead();
    expect(report.movedFromDefault).toBeGreaterThanOrEqual(4); // message, content, delivery, attempt
    expect(await partitionOf('messages', 'id', id)).toBe(partitionName('messages', utcDay(far)));
    expect(await partitionOf('attempts', 'delivery_id', await deliveryOf(id))).toBe(
      partitionName('attempts', utcDay(far)),
    );
    expect((await get(`/messages/${id}`)).status).toBe(200);
    expect((await get(`/messages/${id}/content`)).status).toBe(200);
    expect(await count('messages_default')).toBe(0);
  });

  it('drops a day past its retention whole: exactly its rows, the next day stays', async () => {
    // 30 days after the end of `day`: every message of `day` is over 30 days old, those of `nextDay` are not.
    stack.h.clock.set(new Date(nextDay.getTime() + 30 * DAY + MINUTE));
    const dayRows = {
      messages: await count(partitionName('messages', day)),
      deliveries: await count(partitionName('deliveries', day)),
      attempts: await count(partitionName('attempts', day)),
    };
    expect(dayRows.messages).toBe(1);
    const totals = { messages: await count('messages'), deliveries: await count('deliveries') };
    const beforeDelivery = await deliveryOf(before);
    // Both deliveries among the dead letters: the dropped day's entry goes with its partition, the next day's stays.
    await db().query(`UPDATE deliveries SET status = 'failed' WHERE id = ANY ($1::text[])`, [
      [beforeDelivery, await deliveryOf(after)],
    ]);

    // Content first (the sweep erases it at retained_until); the messages partition waits for it.
    const early = await stack.h.services.partitions.dropExpired();
    expect(early.dropped).not.toContain(partitionName('messages', day));
    await stack.h.services.retention.sweep();
    // Two runs at once (two workers' maintenance, say): each partition is dropped once, and neither run fails.
    const late = await Promise.all([
      stack.h.services.partitions.dropExpired(),
      stack.h.services.partitions.dropExpired(),
    ]);
    const dropped = [...early.dropped, ...late.flatMap((report) => report.dropped)];
    expect(new Set(dropped).size).toBe(dropped.length);
    expect(dropped).toEqual(
      expect.arrayContaining([
        partitionName('messages', day),
        partitionName('message_contents', day),
        partitionName('deliveries', day),
        partitionName('attempts', day),
      ]),
    );
    expect(dropped).not.toContain(partitionName('messages', nextDay));
    expect(dropped).not.toContain(partitionName('deliveries', nextDay));
    expect((await get(`/messages/${before}`)).status).toBe(404);
    expect((await get(`/deliveries/${beforeDelivery}`)).status).toBe(404);
    expect((await get(`/messages/${after}`)).status).toBe(200);
    expect(await count('messages')).toBe(totals.messages - dayRows.messages);
    expect(await count('deliveries')).toBe(totals.deliveries - dayRows.deliveries);
    expect(await db().query('SELECT id FROM delivery_dead_letters')).toEqual([{ id: await deliveryOf(after) }]);
  });

  it("keeps a day while a delivery of its messages is pending, then takes its later days' deliveries with it", async () => {
    // After the far day of the test above: newId never goes back in time within one process.
    const held = new Date(day.getTime() + 45 * DAY);
    stack.h.clock.set(new Date(held.getTime() + 12 * 60 * MINUTE));
    await stack.h.services.partitions.makeAhead();
    const { tenantId, endpointId } = await stack.setup('/held');
    const paused = await get(`/endpoints/${endpointId}`);
    const r = await stack.h.request('PATCH', `/endpoints/${endpointId}`, {
      body: { status: 'paused' },
      ifMatch: paused.headers.get('etag')!,
    });
    expect(r.status, r.text).toBe(200);
    const id = await stack.publish(tenantId, { held: true });
    const pending = await deliveryOf(id);
    // Pending for the whole test: no expiry of its window while the clock jumps 31 days.
    await db().query(`UPDATE deliveries SET expires_at = expires_at + interval '60 days' WHERE id = $1`, [pending]);
    await db().query(`UPDATE delivery_queue SET expires_at = expires_at + interval '60 days' WHERE delivery_id = $1`, [
      pending,
    ]);
    // A later delivery of the message in the next day's partition (as a replay made the day after would be).
    const later = idTimeBound('wdd_', new Date(held.getTime() + DAY + MINUTE)).slice(0, 14) + 'x'.repeat(16);
    await db().query(
      `INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                               expires_at, body_bytes, content_type, delivery_units, created_at, updated_at)
       SELECT $2, team_id, tenant_id, message_id, endpoint_id, event_type, 'succeeded', next_attempt_at, expires_at,
              body_bytes, content_type, delivery_units, created_at, updated_at FROM deliveries WHERE id = $1`,
      [pending, later],
    );
    await db().query(
      `INSERT INTO attempts (id, delivery_id, team_id, endpoint_id, number, trigger, started_at, duration_ms, url_revision,
                             status_code, created_at)
       SELECT $2, id, team_id, endpoint_id, 1, 'scheduled', created_at, 5, 1, 200, created_at FROM deliveries WHERE id = $1`,
      [later, 'wda_' + later.slice(4)],
    );
    expect(await partitionOf('deliveries', 'id', later)).toBe(
      partitionName('deliveries', new Date(held.getTime() + DAY)),
    );

    expect((await db().query(`SELECT status FROM deliveries WHERE id = $1`, [pending]))[0].status).toBe('queued');
    stack.h.clock.set(new Date(held.getTime() + 31 * DAY + MINUTE));
    await stack.h.services.retention.sweep();
    const waiting = await stack.h.services.partitions.dropExpired();
    expect(waiting.dropped).not.toContain(partitionName('messages', held));
    expect(waiting.dropped).not.toContain(partitionName('deliveries', held));
    expect((await get(`/messages/${id}`)).status).toBe(200);

    // The delivery ends (canceled, as a DELETE of its endpoint would leave it); the next runs drop the day.
    await db().query(`UPDATE deliveries SET status = 'canceled', finished_at = now() WHERE id = $1`, [pending]);
    await db().query(`DELETE FROM delivery_queue WHERE delivery_id = $1`, [pending]);
    await stack.h.services.retention.sweep();
    const report = await stack.h.services.partitions.dropExpired();
    expect(report.dropped).toEqual(
      expect.arrayContaining([partitionName('messages', held), partitionName('deliveries', held)]),
    );
    expect(report.strayDeliveriesDeleted).toBe(1);
    expect(await partitionOf('deliveries', 'id', later)).toBeUndefined();
    expect((await db().query(`SELECT count(*)::int AS n FROM attempts WHERE delivery_id = $1`, [later]))[0].n).toBe(0);
    expect((await get(`/messages/${id}`)).status).toBe(404);
  });

  it('leaves a deliveries day kept by a pending delivery to its own drop, never deleting it row by row', async () => {
    const kept = new Date(day.getTime() + 50 * DAY);
    stack.h.clock.set(new Date(kept.getTime() + 12 * 60 * MINUTE));
    await stack.h.services.partitions.makeAhead();
    const { tenantId } = await stack.setup('/kept-day');
    const id = await stack.publish(tenantId, { kept: true });
    await succeeded(id);
    const delivered = await deliveryOf(id);
    // A delivery of that day for an older message, still pending (a replay of a message accepted days before).
    const replay = idTimeBound('wdd_', new Date(kept.getTime() + 13 * 60 * MINUTE)).slice(0, 14) + 'y'.repeat(16);
    const older = idTimeBound('wdm_', new Date(kept.getTime() - 3 * DAY)).slice(0, 14) + 'y'.repeat(16);
    await db().query(
      `INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                               expires_at, body_bytes, content_type, delivery_units, created_at, updated_at)
       SELECT $2, team_id, tenant_id, $3, endpoint_id, event_type, 'retry_wait', next_attempt_at,
              expires_at + interval '60 days', body_bytes, content_type, delivery_units, created_at, updated_at
         FROM deliveries WHERE id = $1`,
      [delivered, replay, older],
    );

    stack.h.clock.set(new Date(kept.getTime() + 31 * DAY + MINUTE));
    await stack.h.services.retention.sweep();
    const report = await stack.h.services.partitions.dropExpired();
    expect(report.dropped).toContain(partitionName('messages', kept));
    expect(report.dropped).not.toContain(partitionName('deliveries', kept));
    expect(report.strayDeliveriesDeleted).toBe(0);
    expect(await partitionOf('deliveries', 'id', delivered)).toBe(partitionName('deliveries', kept));
  });

  it("never queues the service's statements behind a drop's lock for long, and drops once the table is free", async () => {
    const busy = new Date(day.getTime() + 70 * DAY);
    stack.h.clock.set(new Date(busy.getTime() + 12 * 60 * MINUTE));
    await stack.h.services.partitions.makeAhead();
    const { tenantId } = await stack.setup('/busy-day');
    const id = await stack.publish(tenantId, { busy: true });
    await succeeded(id);
    stack.h.clock.set(new Date(busy.getTime() + 31 * DAY + MINUTE));
    await stack.h.services.retention.sweep();

    // A long transaction that read messages holds its lock on the parent for 1.5 s (a slow list, a long admission).
    const holder = db().createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT count(*) FROM messages WHERE id = $1`, [id]);
    const drop = stack.h.services.partitions.dropExpired();
    // Meanwhile the service reads and writes messages as always: each statement's wait, on the real clock.
    const waits: number[] = [];
    const until = performance.now() + 1500;
    while (performance.now() < until) {
      const started = performance.now();
      await db().query(`SELECT count(*) FROM messages WHERE id = $1`, [id]);
      waits.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await holder.commitTransaction();
    await holder.release();
    const report = await drop;

    // A drop waiting its lock for a second (as it did) queues every statement behind it for that second. Now a try
    // waits 50 ms, then steps aside for a while: no statement waits anywhere near that long.
    expect(waits.length).toBeGreaterThan(10);
    expect(Math.max(...waits)).toBeLessThan(500);
    expect(report.dropped).toContain(partitionName('messages', busy));
    expect((await get(`/messages/${id}`)).status).toBe(404);
  });
});

describe('statistics of the partitioned parents', () => {
  it('analyses each parent once a day: the planner gets estimates for the whole table, not only its partitions', async () => {
    const { tenantId } = await stack.setup('/statistics');
    for (let n = 0; n < 5; n += 1) await succeeded(await stack.publish(tenantId, { n }));
    // As on a deployment whose parents were never analysed (autovacuum analyses only their partitions).
    await db().query(`UPDATE time_partitioned_tables SET analyzed_at = NULL`);
    const parentStats = async (table: string) =>
      (await db().query(`SELECT count(*)::int AS n FROM pg_stats WHERE tablename = $1 AND inherited`, [table]))[0]
        .n as number;

    const first = await stack.h.services.partitions.run();
    expect(first.analyzed).toEqual(['attempts', 'deliveries', 'message_contents', 'messages']);
    for (const table of first.analyzed) expect(await parentStats(table), table).toBeGreaterThan(0);
    const noted: { table_name: string; analyzed_at: Date }[] = await db().query(
      `SELECT table_name, analyzed_at FROM time_partitioned_tables ORDER BY table_name`,
    );
    for (const row of noted) expect(row.analyzed_at.getTime(), row.table_name).toBe(stack.h.clock.now().getTime());

    // Within the day, a run (every 5 minutes) analyses nothing; a day later, each parent again.
    expect((await stack.h.services.partitions.run()).analyzed).toEqual([]);
    await db().query(`UPDATE time_partitioned_tables SET analyzed_at = analyzed_at - interval '1 day'`);
    expect((await stack.h.services.partitions.run()).analyzed).toHaveLength(4);
  });
});

/** The creation time an ID carries (its first 10 base32 characters: 48-bit milliseconds and two bits). */
function idTime(id: string): Date {
  const digits = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
  let value = 0n;
  for (const c of digits) value = value * 32n + BigInt('0123456789abcdefghjkmnpqrstvwxyz'.indexOf(c));
  return new Date(Number(value >> 2n));
}
