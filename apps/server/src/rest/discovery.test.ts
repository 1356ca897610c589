import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCOVERY_SQL, partitionOf } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';

/**
 * A worker's discovery (its backstop for lost wake-ups) reads the endpoints of the partitions it owns and probes the
 * queue for each of them only, not every endpoint with work in the deployment (docs/delivery.md, "Endpoint
 * ownership").
 */
let h: Harness;
const ENDPOINTS = 16;
let endpointIds: string[];

beforeAll(async () => {
  h = await startHarness();
  await post(h, '/event_types', { name: 'discovery.test' });
  const tenantId = (await post(h, '/tenants', { external_id: 'discovery', name: 'Discovery' })).json.id;
  endpointIds = [];
  for (let i = 0; i < ENDPOINTS; i += 1)
    endpointIds.push(
      (await post(h, '/endpoints', { tenant_id: tenantId, url: `https://receiver.example.com/d${i}` })).json.id,
    );
  // One message fans out to every endpoint: each has one queued delivery.
  const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'discovery.test', payload: {} });
  expect(message.status).toBe(202);
});
afterAll(async () => {
  await h.close();
});

interface PlanNode {
  'Relation Name'?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

function loopsOver(node: PlanNode, relation: string): number {
  const own = node['Relation Name'] === relation ? (node['Actual Loops'] ?? 0) : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + loopsOver(child, relation), 0);
}

describe('discovery', () => {
  it("finds exactly the owned partitions' endpoints with work, probing the queue once for each of them", async () => {
    const partition = partitionOf(endpointIds[0]!);
    const mine = endpointIds.filter((id) => partitionOf(id) === partition).sort();
    expect(mine.length).toBeLessThan(ENDPOINTS);
    const found = await h.services.ownership.discover([partition]);
    expect(found.map((f) => f.endpointId).sort()).toEqual(mine);
    for (const f of found) expect(f.nextDueAt).toBeInstanceOf(Date);

    const rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[] = await h.services.db.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${DISCOVERY_SQL}`,
      [[partition]],
    );
    // The queue is read for this partition's endpoints only (the other endpoints' rows are never visited).
    expect(loopsOver(rows[0]!['QUERY PLAN'][0]!.Plan, 'delivery_queue')).toBe(mine.length);
  });

  it('finds nothing in partitions without endpoints with work', async () => {
    const used = new Set(endpointIds.map(partitionOf));
    const empty = Array.from({ length: 32 }, (_, i) => i).filter((p) => !used.has(p));
    expect(await h.services.ownership.discover(empty)).toEqual([]);
  });
});
