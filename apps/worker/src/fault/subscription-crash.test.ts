import { describe, expect, it } from 'vitest';
import { verifyAsSpecSays } from '../../../../packages/signing/src/testing/spec-verifier.js';
import { until } from './processes.js';
import { useFaultStack } from './fault-stack.js';

/**
 * At-least-once and commit order across a worker crash, for event subscriptions: the worker is killed with kill -9
 * while the receiver holds the first event's request open. A new worker sends that event again (same Svc-Event-Id)
 * once the lease lapses, and only then the event committed after it.
 */
const stack = useFaultStack({ jobExpirySeconds: 2 });

async function deliveries(subscriptionId: string) {
  return (await stack.d.core.services.db.query(
    `SELECT id, event_id, status, attempt_count, sequence FROM subscription_deliveries
      WHERE subscription_id = $1 ORDER BY sequence`,
    [subscriptionId],
  )) as { id: string; event_id: string; status: string; attempt_count: number; sequence: string }[];
}

describe('a worker killed mid-delivery of an event subscription (kill -9)', () => {
  it('loses nothing and keeps the order: the held event goes again, then the next one', async () => {
    const environment = await stack.d.api('POST', '/platform/feature_flags/environments', { name: 'production' });
    expect(environment.status, environment.text).toBe(201);
    const environmentId = (environment.json as { id: string }).id;
    const subscription = await stack.d.api('POST', '/platform/event_subscriptions', {
      url: `${stack.receiver.baseUrl}/flags`,
      events: ['feature_flags.*'],
      environment_ids: [environmentId],
    });
    expect(subscription.status, subscription.text).toBe(201);
    const { id: subscriptionId, secret } = subscription.json as { id: string; secret: string };
    stack.receiver.set('/flags', { kind: 'hold' });

    const first = await stack.d.startWorker('worker-1');
    for (const key of ['first', 'second']) {
      const put = await stack.d.api('PUT', `/platform/feature_flags/environments/${environmentId}/flags/${key}`, {
        enabled: true,
      });
      expect(put.status, put.text).toBe(201);
    }
    await until('the first request held', () => (stack.receiver.heldResponses === 1 ? true : undefined));
    const [held, waiting] = await deliveries(subscriptionId);
    expect(held).toMatchObject({ status: 'pending', attempt_count: 1 });
    expect(waiting).toMatchObject({ status: 'pending', attempt_count: 0 });
    await first.kill9();
    expect(stack.receiver.received('/flags')).toHaveLength(1);

    stack.receiver.set('/flags', { kind: 'answer' });
    await stack.d.startWorker('worker-2');
    await until(
      'both deliveries to succeed',
      async () => ((await deliveries(subscriptionId)).every((x) => x.status === 'succeeded') ? true : undefined),
      70_000,
      250,
    );

    const got = stack.receiver.received('/flags');
    // The held event twice (the crash window), then the next one: never the second before the first succeeded.
    expect(got.map((r) => r.headers['svc-event-id'])).toEqual([held!.event_id, held!.event_id, waiting!.event_id]);
    expect(got.map((r) => (JSON.parse(r.body.toString()) as { sequence: number }).sequence)).toEqual([1, 1, 2]);
    const now = Math.floor(Date.now() / 1000);
    for (const request of got)
      expect(verifyAsSpecSays(secret, String(request.headers['svc-signature']), request.body, now)).toBe(true);
    const attempts = (await stack.d.core.services.db.query(
      `SELECT attempt, status_code FROM subscription_attempts WHERE delivery_id = $1 ORDER BY attempt`,
      [held!.id],
    )) as { attempt: number; status_code: number }[];
    // The crashed attempt (1) never settled; the retry is attempt 2.
    expect(attempts).toEqual([{ attempt: 2, status_code: 200 }]);
  }, 120_000);
});
