/**
 * One deployment under test for the delivery benchmark (scripts/bench-delivery.ts): a Postgres, the server and worker
 * processes (built JavaScript, scripts/bench-delivery-env.ts), loopback receivers, and the readings taken around a
 * load window (arrivals, CPU from /proc, probe counters). The scenarios themselves are in bench-delivery.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DISPATCH_PARTITIONS, openCore, systemClock, testCoreOptions, type OpenedCore } from '@svc/core';
import { ensureDatabase, runMigrations, startEmbeddedPostgres, type Migration } from '@svc/db';
import type { PublishJob, PublishResult, PublishTeam } from './bench-delivery-load.js';
import {
  cpuDelta,
  cpuSeconds,
  freePort,
  postgresCpu,
  probeStats,
  Receivers,
  loadStartAt,
  runLoad,
  sleep,
  startService,
  stopService,
  waitFor,
  type BenchTeam,
  type ProbeStats,
  type ServiceBuild,
  type ServiceProcess,
} from './bench-delivery-env.js';

/** The server's pool size (openDataSource's default): the commit ceiling uses the same. */
const SERVER_POOL_SIZE = 10;

export interface Harness {
  origin: string;
  receivers: Receivers;
  server: ServiceProcess;
  /** The first worker; `workers` holds every worker running now (more while scenario "scale" runs). */
  worker: ServiceProcess;
  workers: ServiceProcess[];
  postgresDir: string;
  databaseUrl: string;
  core: OpenedCore;
  build: ServiceBuild;
  /** The environment the service processes get, for starting more workers. */
  env: Record<string, string>;
  /** Prefix of the processes' names (logs and profiles): '' or 'durable-'. */
  label: string;
  stop(): Promise<void>;
}

/**
 * Starts a deployment. `durable` runs its own embedded cluster with fsync=on: the embedded cluster sets fsync on the
 * postmaster's command line (packages/db), which outranks ALTER SYSTEM, so a running fsync=off cluster cannot be
 * switched by a reload. Otherwise the cluster is embedded with fsync=off, or a fresh database on BENCH_POSTGRES_URL.
 */
export async function startHarness(
  build: ServiceBuild,
  /**
   * `migrations`: the ones to apply (all by default); `beforeServices` runs once they are, before the server and worker
   * start (the upgrade benchmark stops before 0041 and applies it later, under load).
   */
  options: {
    durable: boolean;
    specLimits?: boolean;
    label?: string;
    migrations?: Migration[];
    beforeServices?: (databaseUrl: string) => Promise<void>;
  },
): Promise<Harness> {
  // BENCH_POSTGRES_URL + BENCH_POSTGRES_DIR: a Postgres started by hand (for example with pg_stat_statements
  // preloaded, see docs/benchmarks.md); the benchmark uses a fresh database on it. Otherwise an embedded cluster.
  const external = options.durable ? undefined : process.env['BENCH_POSTGRES_URL'];
  const label = options.label ?? (options.durable ? 'durable-' : '');
  const stops: (() => Promise<void>)[] = [];
  let postgresDir = process.env['BENCH_POSTGRES_DIR'] ?? '';
  let databaseUrl: string;
  if (external) {
    const url = new URL(external);
    url.pathname = `/bench_delivery_${process.pid}`;
    databaseUrl = url.toString();
  } else {
    const postgresTmp = mkdtempSync(path.join(tmpdir(), `svc-bench-delivery-${label}pg-`));
    // A persistent cluster is started with fsync=on; the benchmark removes its files itself.
    const cluster = await startEmbeddedPostgres({ dataDir: postgresTmp, persistent: options.durable });
    databaseUrl = cluster.url.replace(/\/postgres$/, '/bench_delivery');
    postgresDir = cluster.dataDir;
    stops.push(async () => {
      await cluster.stop();
      rmSync(cluster.dataDir, { recursive: true, force: true });
      rmSync(postgresTmp, { recursive: true, force: true });
    });
  }
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => console.error(error));
  };
  try {
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl, options.migrations);
    await options.beforeServices?.(databaseUrl);
    const receivers = new Receivers();
    await receivers.start();
    stops.push(() => receivers.stop());
    const port = await freePort();
    const sealingKey = randomBytes(32);
    const env = {
      DATABASE_URL: databaseUrl,
      SVC_ENCRYPTION_KEY: sealingKey.toString('base64'),
      // Not 127.0.0.1: the service's own host is never accepted as a receiver.
      SVC_PUBLIC_BASE_URL: 'http://webhooks.bench.test',
      SVC_ALLOW_LOOPBACK_RECEIVERS: '1',
      // The throughput scenarios raise the deployment-wide limits; `fairness` runs at the spec's (6 requests, 1,000/s).
      ...(options.specLimits ? {} : { SVC_LIMIT_SERVICE_CONCURRENCY: '2000', SVC_LIMIT_DISPATCH_RATE: '100000' }),
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
    };
    const server = startService(`${label}server`, build.server, build.probe, env, await freePort());
    stops.push(() => stopService(server));
    const origin = `http://127.0.0.1:${port}`;
    await waitFor('server', async () => (await fetch(`${origin}/readyz`)).ok, server);
    const worker = startService(`${label}worker`, build.worker, build.probe, env, await freePort());
    const workers = [worker];
    // Every worker running at the end, the ones "scale" starts too if it failed halfway.
    stops.push(async () => {
      for (const w of workers) await stopService(w);
    });
    await waitFor('worker probe', async () => (await probeStats(worker)).round_trips > 0, worker);
    const core = await openCore(testCoreOptions(databaseUrl, systemClock, { sealingKey, poolSize: 4 }));
    stops.push(() => core.close());
    return { origin, receivers, server, worker, workers, postgresDir, databaseUrl, core, build, env, label, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts one more worker process like the first and waits for its probe. */
export async function startExtraWorker(h: Harness, name: string): Promise<ServiceProcess> {
  const worker = startService(`${h.label}${name}`, h.build.worker, h.build.probe, h.env, await freePort());
  h.workers.push(worker);
  await waitFor(`${name} probe`, async () => (await probeStats(worker)).round_trips > 0, worker);
  return worker;
}

/** Stops the workers other than the first, by their own pids. */
export async function stopExtraWorkers(h: Harness): Promise<void> {
  for (const worker of h.workers.splice(1)) await stopService(worker);
}

/** Waits until `owners` workers hold live leases on every dispatch partition between them. */
export async function waitForPartitionOwners(h: Harness, owners: number): Promise<void> {
  await waitFor(`${owners} workers owning the partitions`, async () => {
    const [row]: { owners: number; leased: number }[] = await h.core.services.db.query(
      `SELECT count(DISTINCT owner)::int AS owners, count(*)::int AS leased
         FROM dispatch_partitions WHERE lease_until > now()`,
    );
    return row?.owners === owners && row.leased === DISPATCH_PARTITIONS;
  });
}

/** The probe counters of every worker running, summed. */
export async function workerStats(h: Harness): Promise<ProbeStats> {
  const sum: ProbeStats = { round_trips: 0, statements: {} };
  for (const worker of h.workers) {
    const stats = await probeStats(worker);
    sum.round_trips += stats.round_trips;
    for (const [key, n] of Object.entries(stats.statements)) sum.statements[key] = (sum.statements[key] ?? 0) + n;
  }
  return sum;
}

export interface CpuReading {
  server: number;
  worker: number;
  postgres: Map<number, number>;
}

/** CPU seconds of the server, the workers (summed) and every Postgres process. */
export function readCpu(h: Harness): CpuReading {
  return {
    server: cpuSeconds(h.server.child.pid!),
    worker: h.workers.reduce((sum, w) => sum + cpuSeconds(w.child.pid!), 0),
    postgres: h.postgresDir ? postgresCpu(h.postgresDir) : new Map(),
  };
}

/** CPU seconds used between two readings, per process kind. */
export function cpuUsed(before: CpuReading, after: CpuReading) {
  return {
    server: after.server - before.server,
    worker: after.worker - before.worker,
    postgres: cpuDelta(before.postgres, after.postgres),
  };
}

/** CPU ms per message between two readings, per process kind and in all. */
export function cpuPerMessage(before: CpuReading, after: CpuReading, messages: number) {
  const used = cpuUsed(before, after);
  const per = (seconds: number) => (seconds * 1000) / Math.max(1, messages);
  const [server, worker, postgres] = [per(used.server), per(used.worker), per(used.postgres)];
  return { server, worker, postgres, total: server + worker + postgres };
}

/** Waits until the receivers named by `which` have seen `expected` arrivals; answers the seconds waited. */
export async function drain(
  h: Harness,
  which: (name: string) => boolean,
  expected: number,
  limitS = 120,
): Promise<number> {
  const started = Date.now();
  while (h.receivers.total(which) < expected && Date.now() - started < limitS * 1000) await sleep(100);
  return (Date.now() - started) / 1000;
}

export const publishTeams = (teams: BenchTeam[]): PublishTeam[] =>
  teams.map(({ authorization, tenantId, eventType }) => ({ authorization, tenantId, eventType }));

export interface Window {
  load: PublishResult;
  /** Arrivals at the receivers named by `which` during the load's time window, per second. */
  deliveredPerS: number;
  /** CPU ms per second of each process kind during the load's time window. */
  cpuMsPerS: { server: number; worker: number; postgres: number };
}

/** Runs one publish job and reads the receivers' arrivals and the processes' CPU at exactly its time window. */
export async function publishWindow(
  h: Harness,
  job: Omit<PublishJob, 'startAt' | 'kind' | 'origin'>,
  which: (name: string) => boolean,
): Promise<Window> {
  const startAt = loadStartAt();
  const at: { before?: { arrivals: number; cpu: CpuReading }; after?: { arrivals: number; cpu: CpuReading } } = {};
  const read = () => ({ arrivals: h.receivers.total(which), cpu: readCpu(h) });
  const first = setTimeout(() => (at.before = read()), startAt - Date.now());
  const last = setTimeout(() => (at.after = read()), startAt + job.durationMs - Date.now());
  const load = await runLoad<PublishResult>({ kind: 'publish', origin: h.origin, startAt, ...job });
  clearTimeout(first);
  clearTimeout(last);
  const before = at.before ?? { arrivals: 0, cpu: readCpu(h) };
  const after = at.after ?? read();
  const used = cpuUsed(before.cpu, after.cpu);
  const perS = (seconds: number) => (seconds * 1000) / (job.durationMs / 1000);
  if (load.first_error) console.warn(`  (load: ${JSON.stringify(load.rejected)} first: ${load.first_error})`);
  return {
    load,
    deliveredPerS: (after.arrivals - before.arrivals) / (job.durationMs / 1000),
    cpuMsPerS: { server: perS(used.server), worker: perS(used.worker), postgres: perS(used.postgres) },
  };
}

/** Single-row INSERT commits/s through a pool of the server's size, from the load process. */
export async function measureCommits(h: Harness, seconds: number, poolSize = SERVER_POOL_SIZE): Promise<number> {
  const result = await runLoad<{ commits_per_s: number }>({
    kind: 'commits',
    databaseUrl: h.databaseUrl,
    poolSize,
    seconds,
    startAt: Date.now(),
  });
  return result.commits_per_s;
}

/** Raw undici POSTs/s to the receivers, 32 in flight, from the load process. */
export async function measurePosts(h: Harness, seconds: number, concurrency = 32): Promise<number> {
  const result = await runLoad<{ posts_per_s: number }>({
    kind: 'posts',
    url: h.receivers.url('fast', 'ceiling'),
    concurrency,
    seconds,
    startAt: Date.now(),
  });
  return result.posts_per_s;
}

/** One message to each team, delivered: the worker runs and every endpoint answers. */
export async function warmUp(h: Harness, teams: BenchTeam[]): Promise<void> {
  const expected = h.receivers.total() + teams.reduce((n, t) => n + t.endpoints.length, 0);
  await Promise.all(
    teams.map(async (team, i) => {
      const response = await fetch(`${h.origin}/v1/messages`, {
        method: 'POST',
        headers: {
          authorization: team.authorization,
          'content-type': 'application/json',
          'idempotency-key': `warm-${i}`,
        },
        body: JSON.stringify({ tenant_id: team.tenantId, event_type: team.eventType, payload: { warm: true } }),
      });
      if (response.status !== 202)
        throw new Error(`warm-up: POST /v1/messages ${response.status} ${await response.text()}`);
    }),
  );
  if ((await drain(h, () => true, expected, 60)) >= 60)
    throw new Error(`warm-up: ${h.receivers.total()} of ${expected} deliveries arrived in 60 s:\n${h.worker.output()}`);
}
