import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLockName } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';
import { graphqlClient } from './test-client.js';

/** The usage query over the real server: the same report as GET /v1/platform/meta/usage, in camelCase. */
let h: Harness;
let gql: ReturnType<typeof graphqlClient>;
let tenantId: string;
let limitedKey: string;

const USAGE = `query($month: String) {
  usage(month: $month) {
    month status closedAt period { start end } currency rateVersion totalUsd
    meters { meter rateVersion unit units totalUsd }
    keys { keyId label spendingLimitUsd spentUsd remainingUsd meters { meter rateVersion unit units totalUsd } }
  }
}`;

beforeAll(async () => {
  h = await startHarness();
  gql = graphqlClient(h);
  tenantId = (await post(h, '/tenants', { external_id: 'usage', name: 'Usage' })).json.id;
  await post(h, '/event_types', { name: 'usage.event' });
  for (const path of ['a', 'b'])
    await post(h, '/endpoints', { tenant_id: tenantId, url: `https://receiver.example.com/${path}` });
  limitedKey = (await h.services.teams.createKey(h.team.teamId, { spendingLimitMicros: 1_000n, label: 'limited' }))
    .secret;
});
afterAll(async () => {
  await h.close();
});

async function publish(key: string, payload: unknown = { n: 1 }): Promise<void> {
  const response = await post(h, '/messages', { tenant_id: tenantId, event_type: 'usage.event', payload }, { key });
  expect(response.status, response.text).toBe(202);
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** The REST report in GraphQL's spelling: camelCase fields; key meters also name their unit. */
function asGraphql(value: unknown, inKey = false): unknown {
  if (Array.isArray(value)) return value.map((item) => asGraphql(item, inKey));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([name, field]) => [
    camel(name),
    asGraphql(field, inKey || name === 'keys'),
  ]);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  if (inKey && 'meter' in object) object['unit'] = 'unit';
  return object;
}

async function restUsage(month?: string) {
  const response = await h.request('GET', `/platform/meta/usage${month ? `?month=${month}` : ''}`);
  expect(response.status, response.text).toBe(200);
  return response.json;
}

describe('GraphQL usage', () => {
  it('mirrors GET /meta/usage for the current month and for a closed one', async () => {
    await publish(h.team.key, { text: 'x'.repeat(1000) });
    await publish(h.team.key, 'y'.repeat(70_000));
    await publish(limitedKey);

    const current = await gql(USAGE);
    expect(current.body.errors).toBeUndefined();
    expect(current.body.data.usage).toEqual(asGraphql(await restUsage()));
    expect(current.body.data.usage).toMatchObject({
      month: '2026-11',
      status: 'open',
      closedAt: null,
      period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
      currency: 'USD',
      totalUsd: '0.00074',
    });
    expect(current.body.data.usage.keys[1]).toMatchObject({
      spendingLimitUsd: '0.001',
      spentUsd: '0.00011',
      remainingUsd: '0.00089',
    });

    h.clock.set('2026-12-01T00:00:05.000Z');
    const closed = await gql(USAGE, { month: '2026-11' });
    expect(closed.body.errors).toBeUndefined();
    expect(closed.body.data.usage).toEqual({
      ...current.body.data.usage,
      status: 'closed',
      closedAt: '2026-12-01T00:00:05.000Z',
    });
    expect(closed.body.data.usage).toEqual(asGraphql(await restUsage('2026-11')));
  });

  it('refuses a bad month with invalid_field and a close that cannot take its lock with temporarily_unavailable', async () => {
    for (const month of ['2026-13', '2027-01']) {
      const bad = await gql(USAGE, { month });
      expect(bad.body.errors[0].extensions).toMatchObject({ code: 'invalid_field', field: 'month' });
    }
    await publish(h.team.key);
    h.clock.set('2027-01-01T00:00:01.000Z');
    const holder = h.services.db.createQueryRunner();
    await holder.connect();
    const lock = [closeLockName(h.team.teamId, '2026-12-01')];
    try {
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', lock);
      const refused = await gql(USAGE, { month: '2026-12' });
      expect(refused.body.data).toBeNull();
      expect(refused.body.errors[0].extensions).toEqual({ code: 'temporarily_unavailable' });
    } finally {
      await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', lock);
      await holder.release();
    }
    const retried = await gql(USAGE, { month: '2026-12' });
    expect(retried.body.data.usage).toMatchObject({ status: 'closed', totalUsd: '0.00011' });
  });

  it('gives the charges per UTC day, every day of a closed month and to today in the open one, adding up to the total', async () => {
    // The clock stands at 2027-01-01 00:00:01 (the test above); December was charged on its first day only.
    const DAYS = `query($month: String) { usage(month: $month) { status totalUsd days { day totalUsd } } }`;
    const december = (await gql(DAYS, { month: '2026-12' })).body.data.usage;
    expect(december.status).toBe('closed');
    expect(december.days).toHaveLength(31);
    expect(december.days[0]).toEqual({ day: '2026-12-01', totalUsd: december.totalUsd });
    expect(december.days.slice(1).every((day: { totalUsd: string }) => day.totalUsd === '0')).toBe(true);
    expect(december.days.at(-1).day).toBe('2026-12-31');

    // Charges late on one day and early on the next fall on their own UTC days.
    h.clock.set('2027-01-02T23:59:59.000Z');
    await publish(h.team.key);
    h.clock.set('2027-01-03T00:00:00.000Z');
    await publish(h.team.key);
    await publish(limitedKey);
    const january = (await gql(DAYS)).body.data.usage;
    expect(january.status).toBe('open');
    expect(january.days).toEqual([
      { day: '2027-01-01', totalUsd: '0' },
      { day: '2027-01-02', totalUsd: '0.00011' },
      { day: '2027-01-03', totalUsd: '0.00022' },
    ]);
    expect(january.totalUsd).toBe('0.00033');

    const refused = await gql(DAYS, { month: '2027-02' });
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'invalid_field', field: 'month' });
  });

  it('needs a key', async () => {
    const anonymous = await gql(USAGE, {}, { key: null });
    expect(anonymous.status).toBe(401);
  });
});

describe('GraphQL usage per day on the real clock', () => {
  let real: Harness;
  beforeAll(async () => {
    real = await startHarness({ realClock: true });
  });
  afterAll(async () => {
    await real?.close();
  });

  it("ends the current month's days with today (UTC), which holds what was just charged", async () => {
    const tenant = await post(real, '/tenants', { external_id: 'daily', name: 'Daily' });
    await post(real, '/event_types', { name: 'daily.event' });
    await post(real, '/endpoints', { tenant_id: tenant.json.id, url: 'https://receiver.example.com/daily' });
    const published = await post(real, '/messages', {
      tenant_id: tenant.json.id,
      event_type: 'daily.event',
      payload: { n: 1 },
    });
    expect(published.status, published.text).toBe(202);
    const today = new Date().toISOString().slice(0, 10);
    const usage = (await graphqlClient(real)('{ usage { totalUsd days { day totalUsd } } }')).body.data.usage;
    expect(Number(usage.totalUsd)).toBeGreaterThan(0);
    // A test that runs across midnight UTC may see the charge on yesterday: then today is the last day, and 0.
    expect(usage.days.at(-1).day >= today).toBe(true);
    expect(usage.days[0].day).toBe(`${today.slice(0, 7)}-01`);
    expect(usage.days).toHaveLength(Number(usage.days.at(-1).day.slice(8)));
    const micros = usage.days.reduce(
      (sum: bigint, day: { totalUsd: string }) => sum + BigInt(Math.round(Number(day.totalUsd) * 1e6)),
      0n,
    );
    expect(micros).toBe(BigInt(Math.round(Number(usage.totalUsd) * 1e6)));
  });
});
