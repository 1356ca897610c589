import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSED_CIRCUIT, EngineSteps, type AttemptResult } from '@svc/core';
import { post, startHarness, type Harness } from '../testing/harness.js';

/**
 * A 410 disables its endpoint (docs/delivery.md, "The life of a failing endpoint"); its waiting deliveries are
 * canceled after the settlement, in transactions of bounded size, never inside the settlement that saw the 410
 * (a backlog of max_pending_deliveries rows would ride in it and hold one of the engine's two settlement slots).
 */
let h: Harness;
let tenantId: string;
let endpointId: string;
const WAITING = 25;

const gone: AttemptResult = { kind: 'response', status: 410, retryAfterSeconds: null };

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  await post(h, '/event_types', { name: 'order.created' });
  tenantId = (await post(h, '/tenants', { external_id: 'gone', name: 'Gone' })).json.id;
  endpointId = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/gone' })).json.id;
  for (let i = 0; i <= WAITING; i += 1) {
    const message = await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: { i } });
    expect(message.status, message.text).toBe(202);
  }
});
afterAll(async () => {
  await h.close();
});

async function statuses(): Promise<Record<string, number>> {
  const rows: { status: string; n: number }[] = await h.services.db.query(
    `SELECT status, count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 GROUP BY status`,
    [endpointId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

describe('410 with a backlog', () => {
  it('disables the endpoint in the settlement and cancels the waiting deliveries after it, in bounded batches', async () => {
    const [first] = await h.services.db.query(
      `SELECT id FROM deliveries WHERE endpoint_id = $1 ORDER BY created_at, id LIMIT 1`,
      [endpointId],
    );
    const steps = new EngineSteps(h.services);
    const [claimed] = await steps.claim([first.id]);
    // The settlement alone, as the engine's settlement batch makes it.
    const settled = await h.services.settlement.settle(
      'wkr_steps',
      [{ attempt: claimed!, result: gone, durationMs: 5, responseBody: null, jitter: 0 }],
      () => CLOSED_CIRCUIT,
    );
    expect(settled.disabled).toEqual([endpointId]);
    const endpoint = await h.request('GET', `/endpoints/${endpointId}`);
    expect(endpoint.json.status).toBe('disabled');
    // The backlog is untouched by the settlement's transaction.
    expect(await statuses()).toEqual({ failed: 1, queued: WAITING });

    // Canceled by the engine beside its settlements, 10 rows a transaction here (1,000 by default).
    const db = h.services.db;
    const transaction = db.transaction.bind(db);
    let transactions = 0;
    (db as { transaction: unknown }).transaction = (...args: Parameters<typeof db.transaction>) => {
      transactions += 1;
      return (transaction as (...a: unknown[]) => unknown)(...args);
    };
    let canceled: number;
    try {
      canceled = await h.services.ownership.cancelDisabledBacklogs([endpointId], 10);
    } finally {
      (db as { transaction: unknown }).transaction = transaction;
    }
    expect(transactions).toBe(3);
    expect(canceled).toBe(WAITING);
    expect(await statuses()).toEqual({ failed: 1, canceled: WAITING });
    // Read from the table: the feed (GET /events) waits for other test files' open transactions.
    const events: { type: string }[] = await h.services.db.query(
      `SELECT type FROM operational_events WHERE resource_id = $1`,
      [endpointId],
    );
    expect(events.map((e) => e.type)).toContain('webhooks.endpoint.disabled');
    // Nothing is left for the reconciliation sweep.
    expect(await h.services.ownership.cancelDisabledBacklogs()).toBe(0);
  });

  it('the reconciliation sweep cancels what a stopped process left, and never a resumed endpoint’s deliveries', async () => {
    const other = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/left' })).json
      .id as string;
    for (let i = 0; i < 3; i += 1)
      await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: { left: i } });
    // Disabled as a settlement would, with its backlog left waiting (the process stopped before canceling it).
    await h.services.db.query(
      `UPDATE endpoints SET status = 'disabled', disabled_reason = 'endpoint_gone' WHERE id = $1`,
      [other],
    );
    expect(await h.services.ownership.cancelDisabledBacklogs()).toBe(3);
    const rows: { n: number }[] = await h.services.db.query(
      `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status = 'canceled'`,
      [other],
    );
    expect(rows[0]!.n).toBe(3);

    // Resumed before its backlog was reached: nothing of it is canceled.
    const third = (await post(h, '/endpoints', { tenant_id: tenantId, url: 'https://receiver.example.com/back' })).json
      .id as string;
    await post(h, '/messages', { tenant_id: tenantId, event_type: 'order.created', payload: { back: true } });
    expect(await h.services.ownership.cancelDisabledBacklogs([third])).toBe(0);
    const waiting: { n: number }[] = await h.services.db.query(
      `SELECT count(*)::int AS n FROM delivery_queue WHERE endpoint_id = $1`,
      [third],
    );
    expect(waiting[0]!.n).toBe(1);
  });
});
