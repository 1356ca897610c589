import { describe, expect, it } from 'vitest';
import { until } from './processes.js';
import { useFaultStack } from './fault-stack.js';

/**
 * A worker killed with kill -9 in the middle of a replay batch: the batch's transaction (its generations, their
 * charge and the cursor) dies with the worker's connection, the job comes back, and a new worker finishes the
 * replay without creating or charging any generation twice. The batch is caught mid-way for certain: the test
 * holds the paying key's spend row, so the batch waits in its charge, inside its transaction, when it is killed.
 */
const stack = useFaultStack({ jobExpirySeconds: 2 });

describe('a worker killed mid-replay (kill -9)', () => {
  it('resumes from the cursor: every dead letter replayed once, charged once', async () => {
    stack.receiver.set('/replayed', { kind: 'answer', status: 400 });
    const { tenantId, endpointId } = await stack.d.endpoint(`${stack.receiver.baseUrl}/replayed`, {
      retry_delays_seconds: [],
    });
    const first = await stack.d.startWorker('worker-1');
    const messages: string[] = [];
    for (let i = 0; i < 6; i += 1) messages.push((await stack.d.publish(tenantId, { i })).json.id);
    const db = stack.d.core.services.db;
    await until('six dead letters', async () => {
      const [row] = await db.query(
        `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status = 'failed'`,
        [endpointId],
      );
      return row.n === 6 ? true : undefined;
    });
    stack.receiver.set('/replayed', { kind: 'answer', status: 204 });

    const [{ key_id: keyId }] = await db.query(`SELECT key_id FROM charges LIMIT 1`);
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM key_monthly_spend WHERE key_id = $1 FOR UPDATE', [keyId]);
    const started = await stack.d.api('POST', '/replays', { endpoint_id: endpointId });
    expect(started.status, started.text).toBe(202);
    const replayId: string = started.json.id;
    await until('the batch to wait in its charge', async () => {
      const rows = await db.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%key_monthly_spend%'`,
      );
      return rows.length > 0 ? true : undefined;
    });
    await first.kill9();
    await holder.query('COMMIT');
    await holder.release();
    // Nothing of the killed batch was kept.
    const [kept] = await db.query('SELECT count(*)::int AS n FROM deliveries WHERE replay_id = $1', [replayId]);
    expect(kept.n).toBe(0);

    await stack.d.startWorker('worker-2');
    await until(
      'the replay to complete',
      async () => {
        const r = await stack.d.api('GET', `/replays/${replayId}`);
        return r.json.status === 'completed' ? r.json : undefined;
      },
      60_000,
      250,
    );
    const replay = (await stack.d.api('GET', `/replays/${replayId}`)).json;
    expect(replay.counts).toMatchObject({ matched: 6, created: 6, succeeded: 6, failed: 0, pending: 0 });
    expect(replay.cost_usd).toBe('0.0003');
    const generations: { message_id: string; n: number }[] = await db.query(
      `SELECT message_id, count(*)::int AS n FROM deliveries WHERE replay_id = $1 GROUP BY message_id`,
      [replayId],
    );
    expect(generations.map((g) => g.message_id).sort()).toEqual([...messages].sort());
    expect(generations.every((g) => g.n === 1)).toBe(true);
    const [charged] = await db.query(
      `SELECT count(*)::int AS n, sum(amount_micros)::int AS micros FROM charges
        WHERE resource_id IN (SELECT id FROM deliveries WHERE replay_id = $1)`,
      [replayId],
    );
    expect(charged).toEqual({ n: 6, micros: 300 });
    for (const id of messages) expect(stack.receiver.received('/replayed', id)).toHaveLength(2);
  }, 120_000);
});
