import { describe, expect, it } from 'vitest';
import { DISPATCH_PARTITIONS, partitionOf } from '@svc/core';
import { until } from './processes.js';
import { useFaultStack } from './fault-stack.js';

/**
 * Ordered endpoints across two worker processes, one of them killed with kill -9 while it delivers: the order of
 * each endpoint holds (a receiver sees numbers that never go down; a number comes again only as the redelivery of
 * the attempt the crash cut), nothing is lost, and no endpoint ever has two requests open at once.
 */
const stack = useFaultStack({ jobExpirySeconds: 2 });

describe('ordered endpoints with two workers and a kill -9', () => {
  it('keep every endpoint in order, one at a time, and lose nothing', async () => {
    const endpoints: { path: string; tenantId: string; endpointId: string }[] = [];
    // Two ordered endpoints in each half of the partitions, so both workers own some.
    for (const half of [0, 1])
      for (let i = 0; i < 2; i += 1) {
        const path = `/ordered-${half}-${i}`;
        stack.receiver.set(path, { kind: 'answer', delayMs: 5 });
        for (;;) {
          const made = await stack.d.endpoint(`${stack.receiver.baseUrl}${path}`, {
            ordering: 'ordered',
            timeout_seconds: 2,
          });
          if (Math.floor(partitionOf(made.endpointId) / (DISPATCH_PARTITIONS / 2)) !== half) continue;
          endpoints.push({ path, ...made });
          break;
        }
      }
    const first = await stack.d.startWorker('worker-1');
    await stack.d.startWorker('worker-2');

    const perEndpoint = 40;
    const published = new Map<string, string[]>(endpoints.map((e) => [e.path, []]));
    const work = endpoints.flatMap((e) => Array.from({ length: perEndpoint }, (_, n) => ({ e, n })));
    const publishing = Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let next = work.shift(); next; next = work.shift()) {
          const r = await stack.d.publish(next.e.tenantId, next.n);
          expect(r.status, r.text).toBe(202);
          published.get(next.e.path)!.push(r.json.id as string);
        }
      }),
    );
    await until('deliveries under way', () => (stack.receiver.requests.length >= 30 ? true : undefined), 30_000, 20);
    await first.kill9();
    await stack.d.startWorker('worker-3');
    await publishing;

    const total = endpoints.length * perEndpoint;
    // On a time-out, what is left in the queue says which endpoint stopped and why.
    const queueLeft = async () =>
      JSON.stringify(
        await stack.d.core.services.db.query(
          `SELECT q.endpoint_id, q.sequence, q.due_at, q.lease_owner, q.attempt, now() AS now
             FROM delivery_queue q ORDER BY q.endpoint_id, q.sequence LIMIT 10`,
        ),
      );
    await until(
      'every delivery to succeed',
      async () => {
        const [row]: { done: string }[] = await stack.d.core.services.db.query(
          `SELECT count(*) FILTER (WHERE status = 'succeeded') AS done FROM deliveries`,
        );
        return Number(row!.done) === total ? true : undefined;
      },
      60_000,
      250,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; the queue: ${await queueLeft()}`);
    });

    for (const e of endpoints) {
      const got = stack.receiver.received(e.path);
      const numbers = got.map((r) => Number(r.headers['svc-sequence']));
      // Never backwards: a number repeats only right after itself (the attempt cut by the crash, sent again).
      for (let i = 1; i < numbers.length; i += 1)
        expect(numbers[i]!, `${e.path}: ${numbers.join(',')}`).toBeGreaterThanOrEqual(numbers[i - 1]!);
      expect([...new Set(numbers)]).toEqual(Array.from({ length: perEndpoint }, (_, i) => i + 1));
      // One number, one message; every published message among them.
      const messageOf = new Map<number, string>();
      for (const r of got) {
        const n = Number(r.headers['svc-sequence']);
        expect(messageOf.get(n) ?? r.headers['webhook-id']).toBe(r.headers['webhook-id']);
        messageOf.set(n, String(r.headers['webhook-id']));
      }
      expect([...messageOf.values()].sort()).toEqual(published.get(e.path)!.slice().sort());
      expect(stack.receiver.maxConcurrent(e.path), e.path).toBe(1);
    }
  }, 120_000);
});
