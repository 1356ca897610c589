import http from 'node:http';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_SCHEMA, deliveryAttemptJob } from '@svc/core';
import { post, startHarness, type Harness } from '../../../server/src/testing/harness.js';
import { httpReceiver, type Receiver } from '../../../../packages/egress/src/testing/receivers.js';
import { startWorker, type RunningWorker } from '../worker.js';
import { until } from './processes.js';

/**
 * The attempt went out but its settlement failed (here: a real lock timeout; in production also a dropped
 * connection or a Postgres restart). The job fails and pg-boss hands it out again at once, while the delivery is
 * still in_flight under its lease. That job must not be dropped as a duplicate: it is the only one left, so the
 * delivery is looked at again when the lease lapses and attempted again.
 */
let h: Harness;
let worker: RunningWorker;
let receiver: Receiver;
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  h = await startHarness();
  await h.services.teams.setPaymentCard(h.team.teamId, true);
  receiver = await httpReceiver((_req, res) => {
    if (receiver.requests.length === 1) held.push(res);
    else res.writeHead(200).end();
  });
  worker = await startWorker({
    databaseUrl: h.databaseUrl,
    services: h.services,
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    maxIdleMs: 100,
  });
  await post(h, '/event_types', { name: 'order.created' });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await h?.close();
});

async function delivery(messageId: string): Promise<{ id: string; status: string; lease_expires_at: Date | null }> {
  const rows = await h.services.db.query('SELECT id, status, lease_expires_at FROM deliveries WHERE message_id = $1', [
    messageId,
  ]);
  return rows[0];
}

describe('a settlement that fails after the attempt went out', () => {
  it('leaves a job behind: the delivery is attempted again once its lease lapses', async () => {
    const tenant = await post(h, '/tenants', { external_id: 'settle', name: 'settle' });
    const endpoint = await post(h, '/endpoints', {
      tenant_id: tenant.json.id,
      url: `http://127.0.0.1:${receiver.port}/`,
      timeout_seconds: 5,
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const message = await post(h, '/messages', { tenant_id: tenant.json.id, event_type: 'order.created', payload: 1 });
    const messageId = message.json.id as string;
    await until('the first request', () => (held.length === 1 ? true : undefined), 15_000, 50);
    const { id: deliveryId } = await delivery(messageId);

    // Another transaction holds the delivery row: settlement waits for it and fails on lock_timeout.
    const blocker = new pg.Client({ connectionString: h.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE', [deliveryId]);
      held[0]!.writeHead(200).end();
      // The failed job is handed out again (retry_count 1); release the row so that its claim goes through.
      await until(
        'the job to fail and come back',
        async () => {
          const rows: { retry_count: number }[] = await h.services.db.query(
            `SELECT retry_count FROM ${JOB_SCHEMA}.job WHERE name = $1 AND data->>'delivery_id' = $2`,
            [deliveryAttemptJob.queue, deliveryId],
          );
          return rows.some((r) => r.retry_count >= 1) ? true : undefined;
        },
        20_000,
        100,
      );
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }

    // The claim finds the lease still live: the delivery stays in_flight, with a job waiting for the lease's end.
    const waiting = await until(
      'a job waiting for the lease',
      async () => {
        const rows: { start_after: Date }[] = await h.services.db.query(
          `SELECT start_after FROM ${JOB_SCHEMA}.job
            WHERE name = $1 AND data->>'delivery_id' = $2 AND state = 'created'`,
          [deliveryAttemptJob.queue, deliveryId],
        );
        return rows.length > 0 ? rows : undefined;
      },
      15_000,
    );
    expect(waiting).toHaveLength(1);
    const stuck = await delivery(messageId);
    expect(stuck.status).toBe('in_flight');
    expect(receiver.requests).toHaveLength(1);

    // The lease lapses (timeout + 30 s on the service clock; pg-boss waits as long in real time, so the job is
    // made due now): the delivery is attempted again and succeeds, with the same webhook-id.
    h.clock.advance(stuck.lease_expires_at!.getTime() - h.clock.now().getTime());
    await h.services.db.query(
      `UPDATE ${JOB_SCHEMA}.job SET start_after = now() WHERE name = $1 AND data->>'delivery_id' = $2 AND state = 'created'`,
      [deliveryAttemptJob.queue, deliveryId],
    );
    worker.notify();
    await until('succeeded', async () => ((await delivery(messageId)).status === 'succeeded' ? true : undefined));
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([messageId, messageId]);
    const attempts: { number: number; status_code: number }[] = await h.services.db.query(
      'SELECT number, status_code FROM attempts WHERE delivery_id = $1',
      [deliveryId],
    );
    // The first attempt's outcome died with its settlement; numbers still only grow.
    expect(attempts).toEqual([{ number: 2, status_code: 200 }]);
  }, 50_000);
});
