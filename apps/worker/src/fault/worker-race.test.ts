import { describe, expect, it } from 'vitest';
import { findFreePort } from '@svc/db';
import { until } from './processes.js';
import { useFaultStack } from './fault-stack.js';

/**
 * Two worker processes race for the same queue: every delivery is delivered, none twice, and each endpoint's
 * max_concurrency holds across both processes (the receiver counts requests open at once per endpoint path).
 */
const stack = useFaultStack();

/** Sum of svc_delivery_attempts_total over outcomes, as the worker's /metrics reports it. */
async function attemptsMade(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('svc_delivery_attempts_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('two worker processes on one queue', () => {
  it('deliver every message exactly once and never exceed an endpoint max_concurrency', async () => {
    const limits = [1, 2, 3];
    const endpoints = [];
    for (const limit of limits) {
      const path = `/c${limit}`;
      // Slow enough answers that the workers contend for each endpoint's slots.
      stack.receiver.set(path, { kind: 'answer', delayMs: 40 });
      endpoints.push({
        path,
        limit,
        ...(await stack.d.endpoint(`${stack.receiver.baseUrl}${path}`, { max_concurrency: limit })),
      });
    }
    // Two different ports (a port just freed can be handed out again).
    const ports = [await findFreePort()];
    while (ports.length < 2) {
      const port = await findFreePort();
      if (port !== ports[0]) ports.push(port);
    }
    const workers = await Promise.all(
      ports.map((port, i) =>
        stack.d.startWorker(`worker-${i + 1}`, { METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' }),
      ),
    );
    await Promise.all(workers.map((w) => w.waitFor('metrics served')));

    const perEndpoint = 40;
    const published: { id: string; path: string }[] = [];
    const work = endpoints.flatMap((e) => Array.from({ length: perEndpoint }, (_, n) => ({ e, n })));
    // A few publishers at once, as integrators would.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let next = work.shift(); next; next = work.shift()) {
          const { e, n } = next;
          const r = await stack.d.publish(e.tenantId, n);
          expect(r.status, r.text).toBe(202);
          published.push({ id: r.json.id as string, path: e.path });
        }
      }),
    );

    const total = limits.length * perEndpoint;
    await until(
      'every delivery to succeed',
      async () => {
        const [row]: { done: string }[] = await stack.d.core.services.db.query(
          `SELECT count(*) FILTER (WHERE status = 'succeeded') AS done FROM deliveries`,
        );
        return Number(row!.done) === total ? true : undefined;
      },
      45_000,
      250,
    );

    for (const e of endpoints) {
      const got = stack.receiver.received(e.path).map((r) => String(r.headers['webhook-id']));
      const expected = published.filter((p) => p.path === e.path).map((p) => p.id);
      // Every message once: no loss, no duplicate.
      expect(got.slice().sort()).toEqual(expected.sort());
      expect(stack.receiver.maxConcurrent(e.path), e.path).toBeLessThanOrEqual(e.limit);
    }
    // Contention really happened: the wider endpoints were used in parallel.
    expect(stack.receiver.maxConcurrent('/c3')).toBeGreaterThan(1);
    const attempts: { n: string; numbers: number[] }[] = await stack.d.core.services.db.query(
      'SELECT count(*) AS n, array_agg(DISTINCT number) AS numbers FROM attempts',
    );
    expect({ attempts: Number(attempts[0]!.n), numbers: attempts[0]!.numbers }).toEqual({
      attempts: total,
      numbers: [1],
    });
    // Both processes made attempts (each reports its own), and both are still running.
    for (const w of workers) expect(w.child.exitCode, w.output().slice(-2000)).toBe(null);
    const made = await Promise.all(ports.map(attemptsMade));
    expect(made[0]! + made[1]!).toBe(total);
    expect(Math.min(...made)).toBeGreaterThan(0);
  }, 90_000);
});
