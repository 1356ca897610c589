import { describe, expect, it } from 'vitest';
import { DISPATCH_PARTITIONS, partitionOf } from '@svc/core';
import { findFreePort } from '@svc/db';
import { until } from './processes.js';
import { useFaultStack } from './fault-stack.js';

/**
 * Two worker processes share one queue: the endpoint partitions split evenly between them (each endpoint has one
 * owner at a time), every delivery is delivered, none twice, and each endpoint's max_concurrency holds across both
 * processes (the receiver counts requests open at once per endpoint path).
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
    // Each limit on an endpoint of each half of the partitions (the first worker keeps the lower half when the
    // second joins), so that both workers have endpoints to deliver to.
    for (const half of [0, 1])
      for (const limit of limits) {
        const path = `/c${limit}-${half}`;
        // Slow enough answers that the attempts of an endpoint overlap up to its limit.
        stack.receiver.set(path, { kind: 'answer', delayMs: 40 });
        for (;;) {
          const made = await stack.d.endpoint(`${stack.receiver.baseUrl}${path}`, { max_concurrency: limit });
          if (Math.floor(partitionOf(made.endpointId) / (DISPATCH_PARTITIONS / 2)) !== half) continue;
          endpoints.push({ path, limit, ...made });
          break;
        }
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
    await until(
      'the partitions to split between the two workers',
      async () => {
        const owners: { n: string }[] = await stack.d.core.services.db.query(
          `SELECT count(*) AS n FROM dispatch_partitions WHERE lease_until > now() GROUP BY owner`,
        );
        return owners.length === 2 && owners.every((o) => Number(o.n) === DISPATCH_PARTITIONS / 2) ? true : undefined;
      },
      15_000,
      100,
    );

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

    const total = endpoints.length * perEndpoint;
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
    expect(stack.receiver.maxConcurrent('/c3-0')).toBeGreaterThan(1);
    expect(stack.receiver.maxConcurrent('/c3-1')).toBeGreaterThan(1);
    const attempts: { n: string; numbers: number[] }[] = await stack.d.core.services.db.query(
      'SELECT count(*) AS n, array_agg(DISTINCT number) AS numbers FROM attempts',
    );
    expect({ attempts: Number(attempts[0]!.n), numbers: attempts[0]!.numbers }).toEqual({
      attempts: total,
      numbers: [1],
    });
    // Both processes made attempts (each reports its own, each for the endpoints it owns), and both still run.
    for (const w of workers) expect(w.child.exitCode, w.output().slice(-2000)).toBe(null);
    const made = await Promise.all(ports.map(attemptsMade));
    expect(made[0]! + made[1]!).toBe(total);
    expect(Math.min(...made)).toBeGreaterThan(0);
  }, 90_000);
});
