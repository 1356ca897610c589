import http from 'node:http';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_FROM, shownStatusSql } from '@svc/core';
import { post, startHarness, type Harness } from '../../../server/src/testing/harness.js';
import { httpReceiver, type Receiver } from '../../../../packages/egress/src/testing/receivers.js';
import { startWorker, type RunningWorker } from '../worker.js';
import { until } from './processes.js';

/**
 * The attempt went out but its settlement failed (here: a real lock timeout; in production also a dropped
 * connection or a Postgres restart). The delivery's queue row stays leased to the worker until the lease ends;
 * then it is due again and the delivery is attempted again with the same webhook-id.
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
  const rows = await h.services.db.query(
    `SELECT d.id, ${shownStatusSql('now()')} AS status, d.lease_expires_at FROM ${DELIVERY_FROM} WHERE d.message_id = $1`,
    [messageId],
  );
  return rows[0];
}

describe('a settlement that fails after the attempt went out', () => {
  it('leaves the row leased: the delivery is attempted again once its lease lapses', async () => {
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

    // Another transaction holds the delivery row: settlement (the batch, then the outcome alone) waits for it and
    // fails on lock_timeout.
    const blocker = new pg.Client({ connectionString: h.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE', [deliveryId]);
      held[0]!.writeHead(200).end();
      await until('the settlement to give up', () => (worker.inFlight === 0 ? true : undefined), 20_000, 50);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }

    // Nothing settled: the delivery is in flight under the worker's lease, and its queue row is due at the lease's end.
    const queued: { lease_owner: string | null; due_at: Date; attempt: number }[] = await h.services.db.query(
      'SELECT lease_owner, due_at, attempt FROM delivery_queue WHERE delivery_id = $1',
      [deliveryId],
    );
    expect(queued).toEqual([{ lease_owner: worker.workerId, due_at: expect.any(Date), attempt: 1 }]);
    expect((await delivery(messageId)).status).toBe('in_flight');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).toHaveLength(1);

    // The lease ends (on the service clock): the delivery is attempted again and succeeds, same webhook-id.
    h.clock.advance(queued[0]!.due_at.getTime() - h.clock.now().getTime());
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
