import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DispatchService, SettlementService, type ClaimedAttempt } from '@svc/core';
import { HotSql } from '@svc/db';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/**
 * The claim and the settlement run as prepared statements whose generic plan is made once per connection, from the
 * statistics of that moment (packages/db/src/hot-sql.ts). A worker that starts beside an empty queue must not keep
 * plans that walk the queue or the deliveries: with 20,000 rows waiting for another endpoint, each table is still
 * reached through its keys. The plans are read with auto_explain on the statements' own connection.
 */
let stack: DeliveryStack;
let hot: HotSql;
let dispatch: DispatchService;
let settlement: SettlementService;
const notices: string[] = [];
const WORKER = 'wkr_plans';

beforeAll(async () => {
  stack = await startDeliveryStack();
  await stack.stopWorker();
  const { services } = stack.h;
  hot = HotSql.open(stack.h.databaseUrl, 1, {
    sessionOptions: [
      '-c session_preload_libraries=auto_explain',
      '-c auto_explain.log_min_duration=0',
      '-c auto_explain.log_analyze=on',
      '-c auto_explain.log_format=json',
      '-c client_min_messages=log',
    ].join(' '),
    onNotice: (message) => notices.push(message),
  });
  const deps = { db: services.db, hot, clock: services.clock, events: services.events };
  dispatch = new DispatchService({
    ...deps,
    credentials: services.endpoints.credentials,
    keyMismatches: services.keyMismatches,
  });
  settlement = new SettlementService(deps);
});
afterAll(async () => {
  await hot.close();
  await stack.close();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The plan auto_explain reported for the last execution of the statement whose text contains `marker`. */
function lastPlan(marker: string): PlanNode {
  for (const message of [...notices].reverse()) {
    const json = message.slice(message.indexOf('{'));
    if (!message.includes('plan:') || !json) continue;
    const explained = JSON.parse(json) as { 'Query Text': string; Plan: PlanNode };
    if (explained['Query Text'].includes(marker)) return explained.Plan;
  }
  throw new Error(`no plan was reported for a statement with ${marker}`);
}

/** Every scan of these tables, with the rows it returned and discarded over all its loops. */
function scansOf(plan: PlanNode, tables: readonly string[]): { node: string; table: string; rows: number }[] {
  const found: { node: string; table: string; rows: number }[] = [];
  const walk = (node: PlanNode) => {
    // A daily partition (migration 0041) counts as its table.
    const table = node['Relation Name']?.replace(/_(legacy|default|p\d{8})$/, '');
    if (table && tables.includes(table) && node['Node Type'].includes('Scan')) {
      const loops = node['Actual Loops'] ?? 1;
      const rows = ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * loops;
      found.push({ node: node['Node Type'], table, rows });
    }
    node.Plans?.forEach(walk);
  };
  walk(plan);
  return found;
}

async function deliveryOf(messageId: string): Promise<{ id: string; endpoint_id: string }> {
  const rows: { id: string; endpoint_id: string }[] = await stack.h.services.db.query(
    'SELECT id, endpoint_id FROM deliveries WHERE message_id = $1',
    [messageId],
  );
  return rows[0]!;
}

/** One attempt of this message's delivery through the statements of `hot`, answered 200. */
async function attemptOnce(messageId: string): Promise<ClaimedAttempt> {
  await stack.h.services.ownership.heartbeat(WORKER);
  const delivery = await deliveryOf(messageId);
  const claimed = await dispatch.claim(WORKER, [{ endpointId: delivery.endpoint_id, want: 1, mine: 0 }], {
    onlyDeliveryIds: [delivery.id],
  });
  const attempt = claimed.attempts[0];
  expect(attempt?.deliveryId).toBe(delivery.id);
  const ok = { kind: 'response' as const, status: 200, retryAfterSeconds: null };
  const settled = await settlement.settle(
    WORKER,
    [{ attempt: attempt!, result: ok, durationMs: 3, responseBody: null, jitter: 0 }],
    () => claimed.lanes[0]!.health,
  );
  expect(settled.outcomes[0]).toMatchObject({ applied: true });
  return attempt!;
}

describe('the hot statements keep index plans as the queue grows', () => {
  it('a claim and a settlement made beside an empty queue still reach rows by key with 20,000 waiting', async () => {
    const quiet = await stack.setup('/plans-quiet');
    const busy = await stack.setup('/plans-busy');
    // The generic plans are made now, beside a queue of one row.
    await attemptOnce(await stack.publish(quiet.tenantId, { n: 1 }));

    // 20,000 deliveries wait for another endpoint (copies of one delivery, each with its queue row).
    const template = await deliveryOf(await stack.publish(busy.tenantId, { n: 2 }));
    await stack.h.services.db.query(
      `WITH copies AS (
         INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                                 expires_at, body_bytes, content_type, delivery_units, created_at, updated_at)
         SELECT d.id || '_' || g, d.team_id, d.tenant_id, d.message_id, d.endpoint_id, d.event_type, 'queued',
                d.next_attempt_at, d.expires_at, d.body_bytes, d.content_type, d.delivery_units, d.created_at,
                d.updated_at
           FROM deliveries d, generate_series(1, 20000) g WHERE d.id = $1
         RETURNING id, endpoint_id, next_attempt_at, expires_at)
       INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at)
       SELECT id, endpoint_id, next_attempt_at, expires_at FROM copies`,
      [template.id],
    );

    notices.length = 0;
    await attemptOnce(await stack.publish(quiet.tenantId, { n: 3 }));
    const tables = ['delivery_queue', 'deliveries'];
    const claim = scansOf(lastPlan('WITH owned AS'), tables);
    const settle = scansOf(lastPlan('WITH x AS'), tables);
    // The plans touch both tables (so the check below looks at something), and no scan of them comes near the
    // 20,000 rows behind the other endpoint.
    expect(claim.map((s) => s.table)).toEqual(expect.arrayContaining(tables));
    expect(settle.map((s) => s.table)).toEqual(expect.arrayContaining(tables));
    expect([...claim, ...settle].filter((s) => s.rows > 50)).toEqual([]);
  });
});
