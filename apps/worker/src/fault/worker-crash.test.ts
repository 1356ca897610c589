import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { DELIVERY_FROM, SHOWN_ATTEMPT_COUNT_SQL, shownStatusSql } from '@svc/core';
import { startDeployment, type Deployment } from './deployment.js';
import { killStartedProcesses, until } from './processes.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './receiver.js';

/**
 * At-least-once across a worker crash: a worker process is killed with kill -9 while two receivers hold its
 * requests open, one before it read a byte of the request, one after it read the body (and before it answered).
 * A new worker attempts both again once the job comes back and the lease lapses; both deliveries succeed with the
 * same webhook-id, the duplicate happens only for the request that was in that crash window, and attempt numbers
 * only grow.
 */
let database: { url: string; drop(): Promise<void> };
let d: Deployment;
let unread: Receiver;
let unanswered: Receiver;
let steady: Receiver;

beforeAll(async () => {
  database = await createTestDatabase();
  [unread, unanswered, steady] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
  d = await startDeployment({ databaseUrl: database.url, jobExpirySeconds: 2 });
}, 60_000);

afterAll(async () => {
  await killStartedProcesses();
  await d?.close();
  await Promise.all([unread, unanswered, steady].map((r) => r?.close()));
  await database?.drop();
});

function verify(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(secret.slice('whsec_'.length)).verify(request.body.toString('utf8'), {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

async function deliveryOf(messageId: string) {
  const rows: { id: string; status: string; attempt_count: number }[] = await d.core.services.db.query(
    `SELECT d.id, ${shownStatusSql('now()')} AS status, ${SHOWN_ATTEMPT_COUNT_SQL} AS attempt_count FROM ${DELIVERY_FROM} WHERE d.message_id = $1`,
    [messageId],
  );
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

async function attemptsOf(deliveryId: string) {
  return (await d.core.services.db.query(
    'SELECT id, number, status_code FROM attempts WHERE delivery_id = $1 ORDER BY created_at, number',
    [deliveryId],
  )) as { id: string; number: number; status_code: number | null }[];
}

describe('a worker killed mid-delivery (kill -9)', () => {
  it('loses nothing: both held deliveries are attempted again by a new worker and succeed, same webhook-id', async () => {
    // The endpoint timeout bounds the lease (timeout + 30 s): short, so the retry comes soon after the crash.
    const timeout = { timeout_seconds: 5 };
    const a = await d.endpoint(`${unread.baseUrl}/unread`, timeout);
    const b = await d.endpoint(`${unanswered.baseUrl}/unanswered`, timeout);
    const c = await d.endpoint(`${steady.baseUrl}/steady`, timeout);
    unread.holdUnreadConnections(1);
    unanswered.set('/unanswered', { kind: 'hold' });

    const first = await d.startWorker('worker-1');
    // Deliveries that finish before the crash are delivered exactly once.
    const before = [];
    for (let i = 0; i < 3; i += 1)
      before.push(await d.api('POST', '/messages', { tenant_id: c.tenantId, event_type: 'order.created', payload: i }));
    await until('the steady deliveries', () => (steady.requests.length === 3 ? true : undefined));

    const held = {
      unread: await d.api('POST', '/messages', { tenant_id: a.tenantId, event_type: 'order.created', payload: 'u' }),
      unanswered: await d.api('POST', '/messages', {
        tenant_id: b.tenantId,
        event_type: 'order.created',
        payload: 'a',
      }),
    };
    expect([held.unread.status, held.unanswered.status]).toEqual([202, 202]);
    await until('both requests held', () =>
      unread.unreadConnections === 1 && unanswered.heldResponses === 1 ? true : undefined,
    );
    const claimed = await deliveryOf(held.unread.json.id);
    expect(claimed).toMatchObject({ status: 'in_flight', attempt_count: 1 });
    await first.kill9();
    expect(unread.requests).toHaveLength(0);
    expect(unanswered.requests).toHaveLength(1);

    // From here on the receivers answer at once.
    unanswered.set('/unanswered', { kind: 'answer' });
    await d.startWorker('worker-2');
    for (const [name, message] of Object.entries(held))
      await until(
        `the ${name} delivery to succeed`,
        async () => ((await deliveryOf(message.json.id)).status === 'succeeded' ? true : undefined),
        50_000,
        250,
      );

    // Before the crash window: the request never reached the receiver, so it arrives once.
    const gotUnread = unread.received('/unread');
    expect(gotUnread).toHaveLength(1);
    expect(gotUnread[0]!.headers['webhook-id']).toBe(held.unread.json.id);
    expect(verify(a.secret, gotUnread[0]!)).toBe('u');
    // After the receiver read the body: the duplicate of the crash window, same webhook-id and delivery, new attempt.
    const gotUnanswered = unanswered.received('/unanswered');
    expect(gotUnanswered).toHaveLength(2);
    expect(gotUnanswered.map((r) => r.headers['webhook-id'])).toEqual([
      held.unanswered.json.id,
      held.unanswered.json.id,
    ]);
    expect(gotUnanswered[1]!.headers['svc-delivery-id']).toBe(gotUnanswered[0]!.headers['svc-delivery-id']);
    expect(gotUnanswered[1]!.headers['svc-attempt-id']).not.toBe(gotUnanswered[0]!.headers['svc-attempt-id']);
    for (const request of gotUnanswered) expect(verify(b.secret, request)).toBe('a');

    // Attempt numbers only grow: the crashed attempt was number 1 (never settled), the retry is number 2.
    for (const message of Object.values(held)) {
      const delivery = await deliveryOf(message.json.id);
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 2 });
      const attempts = await attemptsOf(delivery.id);
      expect(attempts.map((x) => [x.number, x.status_code])).toEqual([[2, 200]]);
    }
    expect((await attemptsOf((await deliveryOf(held.unanswered.json.id)).id))[0]!.id).toBe(
      gotUnanswered[1]!.headers['svc-attempt-id'],
    );

    // No duplicates outside the crash window.
    expect(steady.requests.map((r) => r.headers['webhook-id']).sort()).toEqual(
      before.map((m) => m.json.id as string).sort(),
    );
  }, 90_000);
});
