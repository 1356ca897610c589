import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLockName, formatUsd, parseUsd } from '@svc/core';
import { post, startHarness, uniqueKey, type ApiResponse, type Harness, type TestTeam } from '../testing/harness.js';

/**
 * GET {meta_url}/meta/usage, monthly spending limits and the closing of billing months, over the real server and
 * database. The tests share one clock and walk forward through the months in order: November 2026 (the shape),
 * its end (limits reset), December (the scheduled close), January (a close that cannot take its lock), February (a
 * charge that loses the race with the close, a clock behind the close), March (concurrent traffic) and the end of
 * March under load.
 */
let h: Harness;
let main: PayingTeam;
let limited: { keyId: string; key: string };

interface PayingTeam extends TestTeam {
  tenantId: string;
}

const USAGE = '/platform/meta/usage';

/** A team with a tenant, an event type and two endpoints: a small message costs 1 ingest and 2 delivery units. */
async function payingTeam(name: string): Promise<PayingTeam> {
  const team = name === 'main' ? h.team : await h.newTeam(name);
  const tenant = await post(h, '/tenants', { external_id: name, name }, { key: team.key });
  expect(tenant.status, tenant.text).toBe(201);
  await post(h, '/event_types', { name: 'usage.event' }, { key: team.key });
  for (const path of ['a', 'b']) {
    const endpoint = await post(
      h,
      '/endpoints',
      { tenant_id: tenant.json.id, url: `https://receiver.example.com/${path}` },
      { key: team.key },
    );
    expect(endpoint.status, endpoint.text).toBe(201);
  }
  return { ...team, tenantId: tenant.json.id };
}

function publish(team: PayingTeam, key: string, payload: unknown = { n: 1 }, idempotencyKey = uniqueKey()) {
  return post(
    h,
    '/messages',
    { tenant_id: team.tenantId, event_type: 'usage.event', payload },
    { key, idempotencyKey },
  );
}

/** A 202, retrying the 429s a publisher is told to retry (the team's 4 admissions at once, the admission rate). */
async function publishUntilAnswered(team: PayingTeam, key: string, payload: unknown): Promise<ApiResponse> {
  const idempotencyKey = uniqueKey();
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const response = await publish(team, key, payload, idempotencyKey);
    if (response.status !== 429) return response;
    // The clock stands still otherwise: a millisecond refills the admission bucket (10,000 per second here).
    h.clock.advance(1);
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
  }
  throw new Error('still 429 after 200 attempts');
}

function usage(team: TestTeam, month?: string): Promise<ApiResponse> {
  return h.request('GET', month ? `${USAGE}?month=${month}` : USAGE, { key: team.key });
}

interface LedgerLine {
  key_id: string;
  meter: string;
  units: string;
  micros: string;
}

/** The charges ledger of a team's month, summed per key and meter. */
async function ledger(teamId: string, month: string): Promise<LedgerLine[]> {
  return h.services.db.query(
    `SELECT key_id, meter, sum(units)::text AS units, sum(amount_micros)::text AS micros FROM charges
      WHERE team_id = $1 AND billing_month = $2 GROUP BY key_id, meter ORDER BY key_id, meter`,
    [teamId, `${month}-01`],
  );
}

async function spendRows(teamId: string, month: string): Promise<Map<string, bigint>> {
  const rows: { key_id: string; spent: string }[] = await h.services.db.query(
    `SELECT s.key_id, s.spent_micros::text AS spent FROM key_monthly_spend s JOIN api_keys k ON k.id = s.key_id
      WHERE k.team_id = $1 AND s.billing_month = $2`,
    [teamId, `${month}-01`],
  );
  return new Map(rows.map((r) => [r.key_id, BigInt(r.spent)]));
}

const micros = (usd: string) => parseUsd(usd)!;

/** The report equals the ledger to the micro-dollar: in total, per meter, per key and per key and meter. */
async function expectUsageEqualsLedger(body: ApiResponse['json'], teamId: string): Promise<bigint> {
  const lines = await ledger(teamId, body.month);
  const sum = (filter: (line: LedgerLine) => boolean, field: 'units' | 'micros') =>
    lines.filter(filter).reduce((total, line) => total + BigInt(line[field]), 0n);
  const total = sum(() => true, 'micros');
  expect(body.total_usd).toBe(formatUsd(total));
  for (const meter of body.meters) {
    expect(BigInt(meter.units)).toBe(sum((l) => l.meter === meter.meter, 'units'));
    expect(micros(meter.total_usd)).toBe(sum((l) => l.meter === meter.meter, 'micros'));
  }
  const spends = await spendRows(teamId, body.month);
  for (const key of body.keys) {
    expect(micros(key.spent_usd)).toBe(sum((l) => l.key_id === key.key_id, 'micros'));
    expect(micros(key.spent_usd)).toBe(spends.get(key.key_id) ?? 0n);
    for (const meter of key.meters) {
      expect(BigInt(meter.units)).toBe(sum((l) => l.key_id === key.key_id && l.meter === meter.meter, 'units'));
      expect(micros(meter.total_usd)).toBe(sum((l) => l.key_id === key.key_id && l.meter === meter.meter, 'micros'));
    }
  }
  // Every key that paid in the month is listed.
  const listed = new Set(body.keys.map((key: { key_id: string }) => key.key_id));
  for (const line of lines) expect(listed).toContain(line.key_id);
  return total;
}

async function lockWaiters(): Promise<number> {
  const rows: { n: number }[] = await h.services.db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0]!.n;
}

async function waitForLockWaiters(count: number): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    if ((await lockWaiters()) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`fewer than ${count} sessions waiting for a lock`);
}

beforeAll(async () => {
  h = await startHarness({ limits: { admission_rate: 10_000 } });
  main = await payingTeam('main');
  const issued = await h.services.teams.createKey(main.teamId, {
    spendingLimitMicros: 330n,
    label: 'checkout service',
  });
  limited = { keyId: issued.keyId, key: issued.secret };
});
afterAll(async () => {
  await h.close();
});

describe('GET /v1/platform/meta/usage', () => {
  it("reports the month's units and USD per meter and per paying key with its limit, equal to the ledger", async () => {
    // The spec's example: a 1 KiB message to 2 endpoints is 1 ingest unit plus 2 delivery units (0.00011 USD).
    for (let i = 0; i < 2; i += 1) expect((await publish(main, main.key, { text: 'x'.repeat(1000) })).status).toBe(202);
    for (let i = 0; i < 3; i += 1) expect((await publish(main, limited.key)).status).toBe(202);
    const refused = await publish(main, limited.key);
    expect(refused.status).toBe(402);
    expect(refused.json.error.code).toBe('spending_limit');

    const response = await usage(main);
    expect(response.status, response.text).toBe(200);
    const meters = (ingest: number, delivery: number) => [
      {
        meter: 'webhooks.ingest_64k',
        rate_version: '2026-10-08',
        units: ingest,
        total_usd: formatUsd(BigInt(ingest) * 10n),
      },
      {
        meter: 'webhooks.delivery_16k',
        rate_version: '2026-10-08',
        units: delivery,
        total_usd: formatUsd(BigInt(delivery) * 50n),
      },
    ];
    expect(response.json).toEqual({
      month: '2026-11',
      status: 'open',
      closed_at: null,
      period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
      currency: 'USD',
      rate_version: '2026-10-08',
      total_usd: '0.00055',
      meters: meters(5, 10).map((line) => ({ ...line, unit: 'unit' })),
      keys: [
        {
          key_id: main.keyId,
          label: null,
          spending_limit_usd: null,
          spent_usd: '0.00022',
          remaining_usd: null,
          meters: meters(2, 4),
        },
        {
          key_id: limited.keyId,
          label: 'checkout service',
          spending_limit_usd: '0.00033',
          spent_usd: '0.00033',
          remaining_usd: '0',
          meters: meters(3, 6),
        },
      ],
    });

    // Bigger bodies: 70,002 payload bytes are 2 ingest units and 5 delivery units per endpoint.
    expect((await publish(main, main.key, 'y'.repeat(70_000))).status).toBe(202);
    const after = await usage(main);
    expect(after.json.total_usd).toBe('0.00107');
    expect(after.json.meters.map((m: { units: number }) => m.units)).toEqual([7, 20]);
    await expectUsageEqualsLedger(after.json, main.teamId);
  });

  it('answers 422 invalid_field for a malformed month, a month in the future or an unknown parameter', async () => {
    for (const month of ['2026-13', '2026-1', 'nov', '2026-11-01', '1999-12', '2026-12', '2027-01']) {
      const response = await usage(main, month);
      expect(response.status, month).toBe(422);
      expect(response.json.error, month).toMatchObject({ code: 'invalid_field', field: 'month' });
    }
    const twice = await h.request('GET', `${USAGE}?month=2026-11&month=2026-10`);
    expect(twice.json.error).toMatchObject({ code: 'invalid_field', field: 'month' });
    const unknown = await h.request('GET', `${USAGE}?since=2026-11`);
    expect(unknown.json.error).toMatchObject({ code: 'invalid_field', field: 'since' });
    const anonymous = await h.request('GET', USAGE, { key: null });
    expect(anonymous.status).toBe(401);
  });
});

describe('monthly spending limits', () => {
  it('reset at 00:00 UTC of the next billing month; the old month stays readable, closed, with ?month=', async () => {
    const november = (await usage(main)).json;
    h.clock.set('2026-11-30T23:59:59.999Z');
    const atLimit = await publish(main, limited.key);
    expect(atLimit.status).toBe(402);
    expect(atLimit.json.error.code).toBe('spending_limit');

    h.clock.set('2026-12-01T00:00:00.000Z');
    const reset = await publish(main, limited.key);
    expect(reset.status, reset.text).toBe(202);
    const december = (await usage(main)).json;
    expect(december).toMatchObject({ month: '2026-12', status: 'open', total_usd: '0.00011' });
    expect(december.keys.find((k: { key_id: string }) => k.key_id === limited.keyId)).toMatchObject({
      spending_limit_usd: '0.00033',
      spent_usd: '0.00011',
      remaining_usd: '0.00022',
    });

    const closed = await usage(main, '2026-11');
    expect(closed.status, closed.text).toBe(200);
    expect(closed.json).toEqual({ ...november, status: 'closed', closed_at: '2026-12-01T00:00:00.000Z' });
    await expectUsageEqualsLedger(closed.json, main.teamId);
  });
});

describe('closing a billing month', () => {
  it('is done by the scheduled job after the month ends, freezing a statement equal to the ledger', async () => {
    h.clock.set('2026-12-20T12:00:00.000Z');
    expect((await publish(main, main.key)).status).toBe(202);
    const open = (await usage(main, '2026-12')).json;
    expect(open.status).toBe('open');

    h.clock.set('2027-01-01T00:07:00.000Z');
    const run = await h.services.usage.closeEndedMonths();
    expect(run).toEqual({ closed: 1, deferred: 0 });
    expect(await h.services.usage.closeEndedMonths()).toEqual({ closed: 0, deferred: 0 });
    const [statement] = await h.services.db.query(
      `SELECT total_micros::text AS total, closed_at FROM billing_month_statements
        WHERE team_id = $1 AND billing_month = '2026-12-01'`,
      [main.teamId],
    );
    const total = await expectUsageEqualsLedger(open, main.teamId);
    expect(BigInt(statement.total)).toBe(total);
    expect(statement.closed_at.toISOString()).toBe('2027-01-01T00:07:00.000Z');
    const closed = await usage(main, '2026-12');
    expect(closed.json).toEqual({ ...open, status: 'closed', closed_at: '2027-01-01T00:07:00.000Z' });
  });

  it('answers 503 temporarily_unavailable with Retry-After when the close cannot take its lock in time', async () => {
    h.clock.set('2027-01-15T12:00:00.000Z');
    expect((await publish(main, main.key)).status).toBe(202);
    h.clock.set('2027-02-01T00:00:01.000Z');
    const holder = h.services.db.createQueryRunner();
    await holder.connect();
    try {
      // Another close of the same month holds the lock.
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [
        closeLockName(main.teamId, '2027-01-01'),
      ]);
      const started = Date.now();
      const refused = await usage(main, '2027-01');
      expect(refused.status, refused.text).toBe(503);
      expect(refused.json.error.code).toBe('temporarily_unavailable');
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      // Nothing of the close stayed, and the current month does not need it.
      const [flags] = await h.services.db.query(
        `SELECT count(*) FILTER (WHERE s.closed)::int AS closed FROM key_monthly_spend s
           JOIN api_keys k ON k.id = s.key_id WHERE k.team_id = $1 AND s.billing_month = '2027-01-01'`,
        [main.teamId],
      );
      expect(flags.closed).toBe(0);
      expect((await usage(main)).status).toBe(200);
      expect((await publish(main, main.key)).status).toBe(202);
    } finally {
      await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [
        closeLockName(main.teamId, '2027-01-01'),
      ]);
      await holder.release();
    }
    const retried = await usage(main, '2027-01');
    expect(retried.status).toBe(200);
    expect(retried.json).toMatchObject({ status: 'closed', total_usd: '0.00011' });
  });

  it('moves a charge that reaches its month after the close into the next month', async () => {
    h.clock.set('2027-02-28T23:00:00.000Z');
    expect((await publish(main, limited.key)).status).toBe(202);
    const holder = h.services.db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    let message: ApiResponse;
    try {
      // A charge of the key is still writing into February when the close starts...
      await holder.query(
        `SELECT 1 FROM key_monthly_spend WHERE key_id = $1 AND billing_month = '2027-02-01' FOR UPDATE`,
        [limited.keyId],
      );
      h.clock.set('2027-03-01T00:00:00.500Z');
      const closing = h.services.usage.closeMonth(main.teamId, '2027-02-01');
      await waitForLockWaiters(1);
      // ...and another one read the clock just before midnight and reaches the row after the close.
      h.clock.set('2027-02-28T23:59:59.900Z');
      const publishing = publish(main, limited.key);
      await waitForLockWaiters(2);
      h.clock.set('2027-03-01T00:00:01.000Z');
      await holder.commitTransaction();
      await closing;
      message = await publishing;
    } finally {
      await holder.release();
    }
    expect(message.status, message.text).toBe(202);
    expect(message.json.created_at).toBe('2027-02-28T23:59:59.900Z');
    const months = await h.services.db.query(
      `SELECT DISTINCT billing_month::text AS month FROM charges WHERE resource_id = $1`,
      [message.json.id],
    );
    expect(months).toEqual([{ month: '2027-03-01' }]);
    const february = (await usage(main, '2027-02')).json;
    // One message of each key in February: the straggler is not among them.
    expect(february).toMatchObject({ status: 'closed', closed_at: '2027-03-01T00:00:01.000Z', total_usd: '0.00022' });
    await expectUsageEqualsLedger(february, main.teamId);
    const march = (await usage(main)).json;
    expect(march).toMatchObject({ month: '2027-03', total_usd: '0.00011' });
  });

  it('answers 503 to a charge whose clock is still in a month another process closed; a retry succeeds', async () => {
    // This process's clock is behind the one that closed February.
    h.clock.set('2027-02-28T23:59:59.950Z');
    const idempotencyKey = uniqueKey();
    const before = await ledger(main.teamId, '2027-02');
    const refused = await publish(main, main.key, { late: true }, idempotencyKey);
    expect(refused.status, refused.text).toBe(503);
    expect(refused.json.error.code).toBe('temporarily_unavailable');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await ledger(main.teamId, '2027-02')).toEqual(before);
    const [stored] = await h.services.db.query(
      `SELECT count(*)::int AS n FROM messages WHERE team_id = $1 AND created_at >= '2027-02-28T23:59:59Z'`,
      [main.teamId],
    );
    expect(stored.n).toBe(1);

    h.clock.set('2027-03-01T00:00:02.000Z');
    const retried = await publish(main, main.key, { late: true }, idempotencyKey);
    expect(retried.status, retried.text).toBe(202);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    const march = (await usage(main)).json;
    expect(march.total_usd).toBe('0.00022');
  });
});

describe('usage under concurrent traffic', () => {
  it('equals the charges ledger exactly, and each key equals its month-to-date spend, with refusals by limits', async () => {
    h.clock.set('2027-03-10T12:00:00.000Z');
    const busy = await payingTeam('busy');
    const keys = [
      { key: busy.key, keyId: busy.keyId, limit: null as bigint | null },
      ...(await Promise.all(
        [1_100n, 2_750n, 0n].map(async (limit) => {
          const issued = await h.services.teams.createKey(busy.teamId, { spendingLimitMicros: limit });
          return { key: issued.secret, keyId: issued.keyId, limit: limit as bigint | null };
        }),
      )),
    ];
    const payloads = [{ n: 1 }, 'z'.repeat(20_000), { text: 'w'.repeat(40_000) }];
    const work = keys.flatMap((key) => Array.from({ length: 20 }, (_, i) => ({ key, payload: payloads[i % 3] })));
    const results: { keyId: string; response: ApiResponse }[] = [];
    const queue = [...work];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (let item = queue.shift(); item; item = queue.shift())
          results.push({
            keyId: item.key.keyId,
            response: await publishUntilAnswered(busy, item.key.key, item.payload),
          });
      }),
    );

    const statuses = results.map((r) => r.response.status);
    expect(new Set(statuses)).toEqual(new Set([202, 402]));
    for (const { response } of results.filter((r) => r.response.status === 402))
      expect(response.json.error.code).toBe('spending_limit');
    const accepted = results.filter((r) => r.response.status === 202);
    const priced = (keyId?: string) =>
      accepted
        .filter((r) => keyId === undefined || r.keyId === keyId)
        .reduce((sum, r) => sum + micros(r.response.json.price.total_usd), 0n);

    const report = (await usage(busy)).json;
    const total = await expectUsageEqualsLedger(report, busy.teamId);
    expect(total).toBe(priced());
    for (const key of keys) {
      const line = report.keys.find((k: { key_id: string }) => k.key_id === key.keyId);
      expect(micros(line.spent_usd)).toBe(priced(key.keyId));
      expect(line.spending_limit_usd).toBe(key.limit === null ? null : formatUsd(key.limit));
      if (key.limit !== null) {
        expect(micros(line.spent_usd)).toBeLessThanOrEqual(key.limit);
        expect(micros(line.remaining_usd)).toBe(key.limit - micros(line.spent_usd));
      }
    }
    expect(accepted.filter((r) => r.keyId === keys[3]!.keyId)).toHaveLength(0);
    expect(accepted.filter((r) => r.keyId === keys[0]!.keyId)).toHaveLength(20);
  });

  it('keeps a closed month equal to its ledger when the month ends and closes while charges are in flight', async () => {
    h.clock.set('2027-03-31T23:59:50.000Z');
    const edge = await payingTeam('edge');
    const second = await h.services.teams.createKey(edge.teamId);
    const senders = [edge.key, second.secret];
    const results: ApiResponse[] = [];
    let sent = 0;
    const closes: Promise<ApiResponse>[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, worker) => {
        for (let i = 0; i < 8; i += 1) {
          sent += 1;
          // Midnight passes while messages are in flight; reports of March close it at once, concurrently.
          if (sent === 30) {
            h.clock.set('2027-04-01T00:00:00.000Z');
            for (let c = 0; c < 4; c += 1) closes.push(usage(edge, '2027-03'));
          }
          results.push(await publishUntilAnswered(edge, senders[worker % 2]!, { worker, i }));
        }
      }),
    );
    const reports = await Promise.all(closes);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 202));
    for (const report of reports) {
      expect(report.status, report.text).toBe(200);
      expect(report.json).toEqual(reports[0]!.json);
    }
    const march = reports[0]!.json;
    expect(march.status).toBe('closed');
    const marchTotal = await expectUsageEqualsLedger(march, edge.teamId);
    const april = (await usage(edge)).json;
    const aprilTotal = await expectUsageEqualsLedger(april, edge.teamId);
    const priced = results.reduce((sum, r) => sum + micros(r.json.price.total_usd), 0n);
    expect(marchTotal + aprilTotal).toBe(priced);
    expect(marchTotal).toBeGreaterThan(0n);
    expect(aprilTotal).toBeGreaterThan(0n);
    const [statements] = await h.services.db.query(
      `SELECT count(*)::int AS n FROM billing_month_statements WHERE team_id = $1`,
      [edge.teamId],
    );
    expect(statements.n).toBe(1);
  });
});
