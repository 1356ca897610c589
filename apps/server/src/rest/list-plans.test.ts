import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startHarness, type Harness } from '../testing/harness.js';

/**
 * The support lists page along an index in both orders: the statement a list sends, planned with sequential scans
 * and sorts priced out, reads the index that holds the list's order (backwards for newest first) and sorts nothing,
 * so a page costs its rows whatever the size of the 30 days (dead letters walk the index of delivery_dead_letters,
migration 0044). The repaired marks read the message's generations by
 * deliveries_message_idx without a sort either.
 */
let h: Harness;
let endpointId: string;

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  await post(h, '/event_types', { name: 'plan.event' });
  const tenantId = (await post(h, '/tenants', { external_id: 'plans', name: 'Plans' })).json.id;
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/plans' })).json
    .id;
  for (let n = 0; n < 3; n += 1)
    expect((await post(h, '/messages', { tenant_id: tenantId, event_type: 'plan.event', payload: { n } })).status).toBe(
      202,
    );
});
afterAll(async () => {
  await h.close();
});

/** The statement (text and values) matching `marker` that answering GET `path` sent. */
async function statementOf(path: string, marker: RegExp): Promise<{ text: string; values: unknown[] }> {
  const sent: { text: string; values: unknown[] }[] = [];
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function recordingQuery(this: unknown, ...args: unknown[]) {
    if (typeof args[0] === 'string' && Array.isArray(args[1])) sent.push({ text: args[0], values: args[1] });
    return original.apply(this, args);
  };
  try {
    const answer = await h.request('GET', path);
    expect(answer.status, answer.text).toBe(200);
  } finally {
    prototype.query = original;
  }
  const matching = sent.filter((statement) => marker.test(statement.text));
  expect(matching, path).toHaveLength(1);
  return matching[0]!;
}

/** The plan of a statement when sequential scans and sorts are priced out (they are used only if nothing else can). */
async function planOf(statement: { text: string; values: unknown[] }): Promise<string> {
  return h.services.db.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = off');
    await tx.query('SET LOCAL enable_sort = off');
    const rows: { 'QUERY PLAN': string }[] = await tx.query(`EXPLAIN ${statement.text}`, statement.values);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

const SORT_NODE = /(^|->\s+)(Incremental )?Sort\s+\(/m;

/**
 * An index and, on a table partitioned by day (migration 0041), the indexes of its partitions: a list reads each
 * day's index in its order and merges them (Merge Append), which sorts nothing either.
 */
async function indexAndPartitions(index: string): Promise<string[]> {
  const rows: { relname: string }[] = await h.services.db.query(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
    [index],
  );
  return [index, ...rows.map((row) => row.relname)];
}

describe('the support lists page along an index both ways', () => {
  const cases: { path: string; marker: RegExp; index: string }[] = [
    { path: '/messages', marker: /ORDER BY m\.created_at/, index: 'messages_team_created_idx' },
    { path: '/deliveries', marker: /ORDER BY d\.created_at/, index: 'deliveries_team_created_idx' },
    { path: '/deliveries?status=failed', marker: /ORDER BY k\.created_at/, index: 'delivery_dead_letters_team_idx' },
    {
      path: '/deliveries?status=failed&repaired=false',
      marker: /ORDER BY k\.created_at/,
      index: 'delivery_dead_letters_team_idx',
    },
    { path: '/events', marker: /txid < pg_snapshot_xmin/, index: 'operational_events_team_feed_idx' },
  ];
  for (const { path, marker, index } of cases)
    for (const order of ['oldest', 'newest'] as const)
      it(`${path}, ${order} first`, async () => {
        const separator = path.includes('?') ? '&' : '?';
        const plan = await planOf(await statementOf(`${path}${separator}order=${order}&limit=2`, marker));
        expect(plan, plan).not.toMatch(SORT_NODE);
        // An index-only scan qualifies as well (the dead letters' narrow table holds nothing but the keys).
        const scan = order === 'newest' ? 'Index (Only )?Scan Backward using' : 'Index (Only )?Scan using';
        const indexes = await indexAndPartitions(index);
        expect(plan, plan).toMatch(new RegExp(`${scan} (${indexes.join('|')})\\b`));
      });

  it('/deliveries by endpoint: its own index, either way', async () => {
    for (const order of ['oldest', 'newest']) {
      const statement = await statementOf(`/deliveries?endpoint_id=${endpointId}&order=${order}`, /ORDER BY d\./);
      const plan = await planOf(statement);
      expect(plan, plan).not.toMatch(SORT_NODE);
      expect(plan, plan).toMatch(/deliveries_endpoint_created_idx|deliveries_team_created_idx/);
    }
  });
});
