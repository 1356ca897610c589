import { describe, expect, it } from 'vitest';
import { DISPATCH_PARTITIONS, partitionOf } from '@svc/core';
import type { ServiceProcess } from './processes.js';
import { until } from './processes.js';
import { useFaultStack } from './fault-stack.js';

/**
 * The engine with real processes on the real clock (docs/delivery.md, "Endpoint ownership"): wake-ups are at
 * once, endpoint limits hold across three workers, a killed worker's endpoints move within seconds, and a crash of
 * every process loses nothing accepted.
 */
const stack = useFaultStack();

function workerIdOf(worker: ServiceProcess): string {
  const match = /"worker_id":"(wkr_[0-9a-f]+)"/.exec(worker.output());
  if (!match) throw new Error(`no worker_id in the output of ${worker.name}`);
  return match[1]!;
}

async function etagOf(endpointId: string): Promise<string> {
  const read = await stack.d.api('GET', `/endpoints/${endpointId}`);
  return read.headers.get('etag')!;
}

async function succeeded(messageIds: readonly string[]): Promise<number> {
  const [row]: { n: string }[] = await stack.d.core.services.db.query(
    `SELECT count(*) AS n FROM deliveries WHERE message_id = ANY($1::text[]) AND status = 'succeeded'`,
    [messageIds],
  );
  return Number(row!.n);
}

/** Publishes to the endpoints in turn from `publishers` loops until stopped; keeps the IDs of the accepted ones. */
function publishing(tenantIds: readonly string[], publishers = 4) {
  const accepted: string[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: publishers }, async () => {
    while (running) {
      const tenantId = tenantIds[n++ % tenantIds.length]!;
      try {
        const answer = await stack.d.publish(tenantId, { n });
        if (answer.status === 202) accepted.push(answer.json.id as string);
      } catch {
        // The server was killed mid-request: not accepted, nothing to deliver.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });
  return {
    accepted,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe('wake-ups on the real clock', () => {
  it('pause, publish, enable: the waiting delivery goes within a second of the enable', async () => {
    const worker = await stack.d.startWorker('wake-worker');
    try {
      const path = '/wake';
      const endpoint = await stack.d.endpoint(`${stack.receiver.baseUrl}${path}`);
      const pause = await patchEndpoint(endpoint.endpointId, { status: 'paused' });
      expect(pause.status, pause.text).toBe(200);
      const message = await stack.d.publish(endpoint.tenantId, { wake: true });
      expect(message.status, message.text).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(stack.receiver.received(path)).toHaveLength(0);

      const enabledAt = Date.now();
      const enable = await patchEndpoint(endpoint.endpointId, { status: 'enabled' });
      expect(enable.status, enable.text).toBe(200);
      await until('the delivery', () => (stack.receiver.received(path).length === 1 ? true : undefined), 5000, 10);
      expect(Date.now() - enabledAt).toBeLessThan(1000);
    } finally {
      await worker.stop(5000);
    }
  }, 60_000);
});

async function patchEndpoint(endpointId: string, body: unknown) {
  return stack.d.api('PATCH', `/endpoints/${endpointId}`, body, undefined, { 'if-match': await etagOf(endpointId) });
}

describe('three workers', () => {
  it('hold max_concurrency at every endpoint; a killed worker’s endpoints move within 10 s and nothing is lost', async () => {
    const workers = [
      await stack.d.startWorker('owner-1'),
      await stack.d.startWorker('owner-2'),
      await stack.d.startWorker('owner-3'),
    ];
    // Endpoints spread over the partitions (so that each worker owns some), each answering after 60 ms.
    const endpoints: { tenantId: string; endpointId: string; path: string }[] = [];
    const thirds = new Set<number>();
    for (let i = 0; endpoints.length < 9 && i < 60; i += 1) {
      const path = `/owned-${i}`;
      stack.receiver.set(path, { kind: 'answer', delayMs: 60 });
      const made = await stack.d.endpoint(`${stack.receiver.baseUrl}${path}`, { max_concurrency: 3 });
      const third = Math.floor((partitionOf(made.endpointId) * 3) / DISPATCH_PARTITIONS);
      if (endpoints.filter((e) => e.path.endsWith(`#${third}`)).length >= 3) continue;
      thirds.add(third);
      endpoints.push({ ...made, path: `${path}#${third}` });
    }
    expect(thirds.size).toBe(3);
    await until(
      'the partitions to spread over the three workers',
      async () => {
        const owners: { n: string }[] = await stack.d.core.services.db.query(
          `SELECT count(*) AS n FROM dispatch_partitions WHERE lease_until > now() GROUP BY owner`,
        );
        return owners.length === 3 ? true : undefined;
      },
      15_000,
      100,
    );

    const load = publishing(endpoints.map((e) => e.tenantId));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const victim = workers[1]!;
    const victimId = workerIdOf(victim);
    const killedAt = Date.now();
    await victim.kill9();
    await until(
      'the killed worker’s partitions to move',
      async () => {
        const [row]: { n: string }[] = await stack.d.core.services.db.query(
          `SELECT count(*) AS n FROM dispatch_partitions WHERE owner IS DISTINCT FROM $1 AND lease_until > now()`,
          [victimId],
        );
        return Number(row!.n) === DISPATCH_PARTITIONS ? true : undefined;
      },
      15_000,
      100,
    );
    const movedAfterMs = Date.now() - killedAt;
    expect(movedAfterMs).toBeLessThan(10_000);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await load.stop();
    expect(load.accepted.length).toBeGreaterThan(50);

    await until(
      'every accepted message delivered',
      async () => ((await succeeded(load.accepted)) === load.accepted.length ? true : undefined),
      30_000,
      200,
    );
    for (const e of endpoints) {
      const path = e.path.split('#')[0]!;
      expect(stack.receiver.maxConcurrent(path), path).toBeLessThanOrEqual(3);
    }
    // Every accepted message reached its receiver (duplicates only from the killed worker's attempts in flight).
    const arrived = new Set(
      endpoints.flatMap((e) =>
        stack.receiver.received(e.path.split('#')[0]!).map((r) => String(r.headers['webhook-id'])),
      ),
    );
    for (const id of load.accepted) expect(arrived.has(id), id).toBe(true);
    for (const w of workers) if (w !== victim) await w.stop(5000);
  }, 120_000);
});

describe('kill -9 of every process mid-load', () => {
  it('delivers everything accepted within the endpoint timeout plus 10 s of the restart', async () => {
    const timeoutSeconds = 5;
    const endpoints = [];
    for (let i = 0; i < 4; i += 1) {
      const path = `/crash-${i}`;
      stack.receiver.set(path, { kind: 'answer', delayMs: 20 });
      endpoints.push(await stack.d.endpoint(`${stack.receiver.baseUrl}${path}`, { timeout_seconds: timeoutSeconds }));
    }
    const workers = [await stack.d.startWorker('crash-1'), await stack.d.startWorker('crash-2')];
    const load = publishing(endpoints.map((e) => e.tenantId));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await Promise.all([stack.d.server.kill9(), ...workers.map((w) => w.kill9())]);
    await load.stop();
    expect(load.accepted.length).toBeGreaterThan(20);

    await stack.d.restartServer();
    const restarted = await stack.d.startWorker('crash-after');
    const restartedAt = Date.now();
    await until(
      'every accepted message delivered',
      async () => ((await succeeded(load.accepted)) === load.accepted.length ? true : undefined),
      (timeoutSeconds + 20) * 1000,
      100,
    );
    expect(Date.now() - restartedAt).toBeLessThan((timeoutSeconds + 10) * 1000);
    await restarted.stop(5000);
  }, 120_000);
});
