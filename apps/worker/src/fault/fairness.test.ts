import { describe, expect, it } from 'vitest';
import type { TeamClient } from './deployment.js';
import { useFaultStack } from './fault-stack.js';
import { until } from './processes.js';

/**
 * Fairness at the spec's default limits (docs/delivery.md, "Fairness"), real processes on the real clock:
 * service_concurrency 6 across every worker, max_concurrency 3. Slow receivers of other teams, each with a backlog,
 * must not stop a third team's webhooks, and the receivers never see more requests at once than the deployment's
 * limit, however many workers share it.
 */
const stack = useFaultStack();

const SLOW_MS = 3000;

/** A team with one tenant and one endpoint on the receiver's path. */
async function tenantOn(team: TeamClient, path: string) {
  return team.endpoint(`${stack.receiver.baseUrl}${path}`);
}

/** Queues `count` messages for the tenant, a few at a time. */
async function backlog(team: TeamClient, tenantId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 5) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(5, count - i) }, (_, j) => team.publish(tenantId, { backlog: i + j })),
    );
    for (const answer of answers) expect(answer.status, answer.text).toBe(202);
  }
}

/**
 * Publishes one message every `everyMs` for `count` messages and returns each one's latency from the publish's
 * answer to the receiver's having it.
 */
async function measure(team: TeamClient, tenantId: string, path: string, count: number, everyMs: number) {
  const sent: { id: string; at: number }[] = [];
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    const answer = await team.publish(tenantId, { probe: i });
    expect(answer.status, answer.text).toBe(202);
    sent.push({ id: answer.json.id as string, at: Date.now() });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - (Date.now() - started))));
  }
  await until(
    `all ${count} probes`,
    () => (sent.every((s) => stack.receiver.received(path, s.id).length > 0) ? true : undefined),
    30_000,
    20,
  );
  const latencies = sent.map((s) => stack.receiver.received(path, s.id)[0]!.at - s.at).sort((a, b) => a - b);
  return { max: latencies[latencies.length - 1]!, p50: latencies[Math.floor(latencies.length / 2)]! };
}

describe('fair delivery slots at the default limits', () => {
  it('two other teams slow receivers with backlogs leave a third team delivering in milliseconds', async () => {
    const worker = await stack.d.startWorker('fair-worker');
    try {
      const [slowA, slowB, fast] = await Promise.all([
        stack.d.addTeam('slow-a'),
        stack.d.addTeam('slow-b'),
        stack.d.addTeam('fast'),
      ]);
      stack.receiver.set('/slow-a', { kind: 'answer', delayMs: SLOW_MS });
      stack.receiver.set('/slow-b', { kind: 'answer', delayMs: SLOW_MS });
      const [a, b, c] = await Promise.all([
        tenantOn(slowA, '/slow-a'),
        tenantOn(slowB, '/slow-b'),
        tenantOn(fast, '/fast'),
      ]);
      const alone = await measure(fast, c.tenantId, '/fast', 5, 100);

      stack.receiver.resetPeakTotal();
      await Promise.all([backlog(slowA, a.tenantId, 20), backlog(slowB, b.tenantId, 20)]);
      // The slow receivers hold every slot they may: the service's six less the two reserved for lanes that are not
      // slow (a third), two each.
      await until('the slow backlogs in flight', () => (stack.receiver.heldOpen() >= 4 ? true : undefined), 10_000);
      const beside = await measure(fast, c.tenantId, '/fast', 20, 150);

      // Before fair slots, every slot that freed went back to the slow lanes: the fast team waited for a slow answer
      // (3 s) or more per message.
      expect(beside.max, JSON.stringify({ alone, beside })).toBeLessThan(1000);
      expect(stack.receiver.peakTotal).toBeLessThanOrEqual(6);
      // Together the slow lanes never held more than the six less the reserve; each at most its max_concurrency.
      expect(stack.receiver.peakOf((path) => path.startsWith('/slow-'))).toBeLessThanOrEqual(4);
      expect(stack.receiver.maxConcurrent('/slow-a')).toBeLessThanOrEqual(3);
      expect(stack.receiver.maxConcurrent('/slow-b')).toBeLessThanOrEqual(3);
      // Their backlogs go with their endpoints (canceled), so the next test starts from an empty queue.
      for (const [team, endpoint] of [
        [slowA, a],
        [slowB, b],
      ] as const) {
        const read = await team.api('GET', `/endpoints/${endpoint.endpointId}`);
        const gone = await team.api('DELETE', `/endpoints/${endpoint.endpointId}`, undefined, undefined, {
          'if-match': read.headers.get('etag')!,
        });
        expect(gone.status, gone.text).toBe(204);
      }
    } finally {
      await worker.stop(8000);
    }
  }, 120_000);

  it('two workers share service_concurrency exactly (7 here): six slow receivers of three teams, and a fourth team flows', async () => {
    // 7 slots over two workers: each worker's old share, ceil(7 / 2) = 4, let eight requests run at once. The reserve
    // is 2 (a third): lanes known to be slow hold at most 5, and a lane of unknown speed (a slow one's first attempt)
    // never takes the last slot, so the slow receivers together never hold more than 6.
    const env = { SVC_LIMIT_SERVICE_CONCURRENCY: '7' };
    const workers = await Promise.all([stack.d.startWorker('fair-1', env), stack.d.startWorker('fair-2', env)]);
    try {
      // Partitions settle between the two (16 each) before the fast endpoint's owner learns its speed: a partition
      // that moves afterwards hands the endpoint to a worker that has not seen it answer (a lane of unknown speed
      // leaves a slot free), which on a loaded machine made its first probes wait for a slow attempt to end.
      await until(
        'the partitions shared by both workers',
        async () => {
          const rows: { n: number }[] = await stack.d.core.services.db.query(
            `SELECT count(*)::int AS n FROM dispatch_partitions
              WHERE lease_until > now() AND owner IN (SELECT id FROM dispatch_workers WHERE heartbeat_at > now() - interval '3 seconds')
              GROUP BY owner`,
          );
          return rows.length === 2 && rows.every((r) => r.n === 16) ? true : undefined;
        },
        30_000,
        100,
      );
      const teams = await Promise.all(['s1', 's2', 's3', 'fast2'].map((name) => stack.d.addTeam(name)));
      const paths = [0, 1, 2, 3, 4, 5].map((i) => `/two-slow-${i}`);
      for (const path of paths) stack.receiver.set(path, { kind: 'answer', delayMs: SLOW_MS });
      // Two endpoints (tenants) in each slow team: the endpoints are spread over both workers' partitions.
      const slowTenants = await Promise.all(paths.map((path, i) => tenantOn(teams[i % 3]!, path)));
      const c = await tenantOn(teams[3]!, '/two-fast');
      // Known fast before the slow ones come (a lane of unknown speed leaves a slot free; one known fast may take it).
      await measure(teams[3]!, c.tenantId, '/two-fast', 3, 100);
      stack.receiver.resetPeakTotal();
      await Promise.all(slowTenants.map((tenant, i) => backlog(teams[i % 3]!, tenant.tenantId, 8)));
      await until('the slow backlogs in flight', () => (stack.receiver.heldOpen() >= 5 ? true : undefined), 10_000);
      const beside = await measure(teams[3]!, c.tenantId, '/two-fast', 15, 150);

      expect(stack.receiver.peakTotal).toBeLessThanOrEqual(7);
      expect(stack.receiver.peakOf((path) => path.startsWith('/two-slow-'))).toBeLessThanOrEqual(6);
      expect(beside.max, JSON.stringify(beside)).toBeLessThan(1500);
    } finally {
      await Promise.all(workers.map((w) => w.stop(8000)));
    }
  }, 120_000);
});
