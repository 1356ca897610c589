/**
 * The delivery benchmark of `npm run bench` (issue 7 §5; docs/benchmarks.md explains every figure). It starts its
 * own Postgres, the production server and worker entry points as processes, loopback receivers (in this process)
 * and publishes through POST /v1/messages from a separate load process:
 *
 *   (a) fan-out 1, closed loop: messages admitted/s and delivered/s; round trips per message; CPU per message
 *   latency: accept-to-receiver p50/p99 at an offered 500 messages/s (fan-out 1)
 *   (b) fan-out 10, closed loop: deliveries/s
 *   (c) as (b) plus one endpoint answering after 2 s: the fast endpoints' pace over their pace in (b)
 *   (d) as (a) with a backlog of pending deliveries (default 1,000,000) inserted with SQL: cost with over without
 *
 * and, in the same run, the ceilings: single-row Postgres commits/s with the server's pool size, raw undici
 * POSTs/s to the same receiver. The machine is shared and noisy, so figures are read against those ceilings.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { RATE_VERSION, openCore, systemClock, testCoreOptions, type OpenedCore } from '@svc/core';
import { ensureDatabase, runMigrations, startEmbeddedPostgres } from '@svc/db';
import type { PublishJob, PublishResult, PublishTeam } from './bench-delivery-load.js';
import {
  addEndpoint,
  cpuDelta,
  cpuSeconds,
  createTeams,
  deleteEndpoint,
  freePort,
  peakRssMb,
  rssMb,
  postgresCpu,
  probeProfile,
  probeStats,
  Receivers,
  runLoad,
  sleep,
  startService,
  statementDelta,
  stopService,
  waitFor,
  type BenchTeam,
  type ServiceProcess,
} from './bench-delivery-env.js';
import { formatSummary, summariseProfile, type CpuProfile } from './bench-profile.js';
import { ROOT } from './local-runtime.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const BACKLOG = Number(process.env['BENCH_BACKLOG'] ?? 1_000_000);
const PROFILE = process.env['BENCH_PROFILE'] === '1';
/** The server's pool size (openDataSource's default): the commit ceiling uses the same. */
const SERVER_POOL_SIZE = 10;
const FANOUT1_TEAMS = 24;
const FANOUT10_TEAMS = 10;
const BACKLOG_TEAMS = 10;
const BACKLOG_SETUP_BUDGET_MS = 110_000;

export interface DeliveryFigures {
  fanout1: {
    admitted_per_s: number;
    delivered_per_s: number;
    rejected: number;
    drain_s: number;
    cpu_ms_per_message: { server: number; worker: number; postgres: number };
  };
  fanout10: { admitted_per_s: number; deliveries_per_s: number };
  latency_at_500: { p50_ms: number; p99_ms: number; admitted_per_s: number; undelivered: number };
  slow_endpoint: { fast_pace_ratio: number; fast_deliveries_per_s: number; slow_deliveries: number };
  backlog: {
    cost_ratio: number;
    size: number;
    setup_s: number;
    cpu_ms_per_message_without: number;
    cpu_ms_per_message_with: number;
    admitted_per_s_with: number;
    delivered_per_s_with: number;
  };
  peak_rss_mb: { server: number; worker: number };
  round_trips_per_message: number;
  round_trips_per_delivery: number;
  ceiling: { commits_per_s: number; posts_per_s: number };
}

interface Harness {
  origin: string;
  receivers: Receivers;
  server: ServiceProcess;
  worker: ServiceProcess;
  postgresDir: string;
  databaseUrl: string;
  core: OpenedCore;
}

const publishTeams = (teams: BenchTeam[]): PublishTeam[] =>
  teams.map(({ authorization, tenantId, eventType }) => ({ authorization, tenantId, eventType }));

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

interface CpuReading {
  server: number;
  worker: number;
  postgres: Map<number, number>;
}

/** CPU seconds of the server, the worker and every Postgres process. */
function readCpu(h: Harness): CpuReading {
  return {
    server: cpuSeconds(h.server.child.pid!),
    worker: cpuSeconds(h.worker.child.pid!),
    postgres: h.postgresDir ? postgresCpu(h.postgresDir) : new Map(),
  };
}

/** CPU ms per message between two readings, per process kind and in all. */
function cpuPerMessage(before: CpuReading, after: CpuReading, messages: number) {
  const per = (seconds: number) => (seconds * 1000) / Math.max(1, messages);
  const server = per(after.server - before.server);
  const worker = per(after.worker - before.worker);
  const postgres = per(cpuDelta(before.postgres, after.postgres));
  return { server, worker, postgres, total: server + worker + postgres };
}

/** Waits until the receivers named by `which` have seen `expected` arrivals; answers the seconds waited. */
async function drain(h: Harness, which: (name: string) => boolean, expected: number, limitS = 120): Promise<number> {
  const started = Date.now();
  while (h.receivers.total(which) < expected && Date.now() - started < limitS * 1000) await sleep(100);
  return (Date.now() - started) / 1000;
}

interface Window {
  load: PublishResult;
  /** Arrivals at the receivers named by `which` during the load's time window, per second. */
  deliveredPerS: number;
  before: number;
}

/** Runs one publish job and counts the receivers' arrivals over exactly its time window. */
async function publishWindow(
  h: Harness,
  job: Omit<PublishJob, 'startAt' | 'kind' | 'origin'>,
  which: (name: string) => boolean,
): Promise<Window> {
  const startAt = Date.now() + 3000;
  let before = 0;
  let after = 0;
  const first = setTimeout(() => (before = h.receivers.total(which)), startAt - Date.now());
  const last = setTimeout(() => (after = h.receivers.total(which)), startAt + job.durationMs - Date.now());
  const load = await runLoad<PublishResult>({ kind: 'publish', origin: h.origin, startAt, ...job });
  clearTimeout(first);
  clearTimeout(last);
  if (after === 0) after = h.receivers.total(which);
  if (load.first_error) console.warn(`  (load: ${JSON.stringify(load.rejected)} first: ${load.first_error})`);
  return { load, deliveredPerS: (after - before) / (job.durationMs / 1000), before };
}

/** Fan-out 1 closed loop: the figures of (a), or of (d) when a backlog is present. */
async function fanout1(h: Harness, teams: BenchTeam[], label: string) {
  const which = (name: string) => name.startsWith('a-');
  const expectedBefore = h.receivers.total(which);
  const [server0, worker0] = [await probeStats(h.server), await probeStats(h.worker)];
  const statementsReset = await resetPgStatements(h);
  const cpu0 = readCpu(h);
  if (PROFILE) await Promise.all([probeProfile(h.server, 'start'), probeProfile(h.worker, 'start')]);
  const window = await publishWindow(h, { teams: publishTeams(teams), perTeam: 2, durationMs: SECONDS * 1000 }, which);
  let profiles: string[] = [];
  if (PROFILE) profiles = await saveProfiles(h, label);
  const drainS = await drain(h, which, expectedBefore + window.load.admitted);
  const cpu = cpuPerMessage(cpu0, readCpu(h), window.load.admitted);
  const [server1, worker1] = [await probeStats(h.server), await probeStats(h.worker)];
  const delivered = h.receivers.total(which) - expectedBefore;
  const postgresTime = statementsReset ? await readPgStatements(h, window.load.admitted) : [];
  return {
    postgresTime,
    admittedPerS: window.load.admitted / (window.load.elapsed_ms / 1000),
    deliveredPerS: window.deliveredPerS,
    rejected: Object.values(window.load.rejected).reduce((a, b) => a + b, 0),
    drainS,
    requestP50: window.load.request_p50_ms,
    requestP99: window.load.request_p99_ms,
    cpuMsPerMessage: cpu.total,
    cpu,
    roundTripsPerMessage: (server1.round_trips - server0.round_trips) / Math.max(1, window.load.admitted),
    roundTripsPerDelivery: (worker1.round_trips - worker0.round_trips) / Math.max(1, delivered),
    serverStatements: statementDelta(server0, server1).map(([k, n]): [string, number] => [
      k,
      n / Math.max(1, window.load.admitted),
    ]),
    workerStatements: statementDelta(worker0, worker1).map(([k, n]): [string, number] => [
      k,
      n / Math.max(1, delivered),
    ]),
    profiles,
  };
}

/** pg_stat_statements, when the server preloads it (BENCH_POSTGRES_URL): reset before a scenario. */
async function resetPgStatements(h: Harness): Promise<boolean> {
  try {
    await h.core.services.db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await h.core.services.db.query('SELECT pg_stat_statements_reset()');
    return true;
  } catch {
    return false;
  }
}

/** Postgres execution time per admitted message by statement, most expensive first. */
async function readPgStatements(h: Harness, messages: number): Promise<[string, number, number][]> {
  const rows: { query: string; ms: number; calls: string }[] = await h.core.services.db.query(
    `SELECT query, total_exec_time AS ms, calls FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT 16`,
  );
  return rows.map((r): [string, number, number] => [
    r.query.replace(/\s+/g, ' ').slice(0, 90),
    r.ms / Math.max(1, messages),
    Number(r.calls) / Math.max(1, messages),
  ]);
}

async function saveProfiles(h: Harness, label: string): Promise<string[]> {
  const dir = path.join(ROOT, '.tmp/bench-profile');
  mkdirSync(dir, { recursive: true });
  const summaries: string[] = [];
  for (const service of [h.server, h.worker]) {
    const profile = (await probeProfile(service, 'stop')) as CpuProfile;
    const file = path.join(dir, `${service.name}-${label}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    summaries.push(
      formatSummary(`${service.name} (${label}, ${path.relative(ROOT, file)})`, summariseProfile(profile, 15)),
    );
  }
  return summaries;
}

/** Accept-to-receiver latency at an offered 500 messages/s with fan-out 1. */
async function latencyAt500(h: Harness, teams: BenchTeam[]) {
  const which = (name: string) => name.startsWith('a-');
  const before = h.receivers.total(which);
  h.receivers.arrivals.clear();
  h.receivers.recording = true;
  const window = await publishWindow(
    h,
    { teams: publishTeams(teams), perTeam: 4, rate: 500, durationMs: SECONDS * 1000, recordAccepted: true },
    which,
  );
  await drain(h, which, before + window.load.admitted, 60);
  h.receivers.recording = false;
  const waitedUntil = Date.now();
  let undelivered = 0;
  const latencies = (window.load.accepted ?? []).map(([id, createdAt]) => {
    const arrived = h.receivers.arrivals.get(id);
    if (arrived === undefined) undelivered += 1;
    return (arrived ?? waitedUntil) - createdAt;
  });
  latencies.sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    admittedPerS: window.load.admitted / (window.load.elapsed_ms / 1000),
    late: window.load.late,
    undelivered,
  };
}

/** Fan-out 10 closed loop; `fast` names the receivers whose pace is compared. */
async function fanout10(h: Harness, teams: BenchTeam[], durationMs: number) {
  const fast = (name: string) => name.startsWith('b-');
  const fanout = teams.reduce((n, t) => n + t.endpoints.length, 0) / teams.length;
  const before = h.receivers.total(fast);
  const worker0 = await probeStats(h.worker);
  const window = await publishWindow(h, { teams: publishTeams(teams), perTeam: 2, durationMs }, fast);
  const drainS = await drain(h, fast, before + window.load.admitted * fanout, 90);
  const worker1 = await probeStats(h.worker);
  return {
    admittedPerS: window.load.admitted / (window.load.elapsed_ms / 1000),
    fastPerS: window.deliveredPerS,
    drainS,
    workerRoundTripsPerFastDelivery:
      (worker1.round_trips - worker0.round_trips) / Math.max(1, h.receivers.total(fast) - before),
  };
}

/**
 * (b) and (c) alternate twice (b, c, b, c) so that drift in the machine's load falls on both alike; (c) adds an
 * endpoint answering after 2 s to the first team (its messages fan out to 11) and deletes it afterwards.
 */
async function fanout10WithAndWithoutSlow(h: Harness, teams: BenchTeam[]) {
  const durationMs = (SECONDS * 1000) / 2;
  const owner = teams[0]!;
  const runs: { b: Awaited<ReturnType<typeof fanout10>>; c: Awaited<ReturnType<typeof fanout10>> }[] = [];
  for (let pass = 0; pass < 2; pass += 1) {
    const b = await fanout10(h, teams, durationMs);
    const slow = await addEndpoint(
      h.origin,
      owner.authorization,
      owner.tenantId,
      h.receivers.url('slow', `slow-${pass}`),
    );
    const c = await fanout10(h, teams, durationMs);
    await deleteEndpoint(h.origin, owner.authorization, slow);
    runs.push({ b, c });
  }
  const mean = (pick: (r: (typeof runs)[number]) => number) => runs.reduce((sum, r) => sum + pick(r), 0) / runs.length;
  const summary = (which: 'b' | 'c') => ({
    admittedPerS: mean((r) => r[which].admittedPerS),
    fastPerS: mean((r) => r[which].fastPerS),
    workerRoundTripsPerFastDelivery: mean((r) => r[which].workerRoundTripsPerFastDelivery),
  });
  await sleep(2000);
  return { b: summary('b'), c: summary('c'), slowDeliveries: h.receivers.total((name) => name.startsWith('slow-')) };
}

/**
 * Pending deliveries scheduled days ahead, with their queue rows, inserted with SQL in batches (one message with
 * one delivery per endpoint of a backlog team): what a deployment holding that backlog stores. Stops early at the
 * set-up budget and answers how many it inserted.
 */
async function insertBacklog(
  h: Harness,
  teams: BenchTeam[],
  size: number,
): Promise<{ inserted: number; seconds: number }> {
  const client = new pg.Client({ connectionString: h.databaseUrl });
  await client.connect();
  const started = Date.now();
  const perBatchMessages = 10_000;
  let inserted = 0;
  try {
    for (let batch = 0; inserted < size && Date.now() - started < BACKLOG_SETUP_BUDGET_MS; batch += 1) {
      const team = teams[batch % teams.length]!;
      const endpointIds = team.endpoints.map((e) => e.id);
      const messages = Math.min(perBatchMessages, Math.ceil((size - inserted) / endpointIds.length));
      const key = (
        await client.query<{ id: string }>('SELECT id FROM api_keys WHERE team_id = $1 LIMIT 1', [team.teamId])
      ).rows[0]!.id;
      await client.query(
        `WITH m AS (
           INSERT INTO messages (id, team_id, tenant_id, event_type, origin, content_type, body_bytes, body_sha256,
                                 deliver_at, expires_at, retained_until, paying_key_id, ingest_units, delivery_units,
                                 price_micros, rate_version, created_at)
           SELECT 'wdm_backlog_' || $1::int || '_' || g, $2, $3, 'bench.event', 'api', 'application/json', 64, 'bench',
                  now() + interval '6 days', now() + interval '6 days 70 hours', now() + interval '30 days', $4, 1,
                  $6::int, 0, $7, now()
             FROM generate_series(1, $5::int) g
           RETURNING id, deliver_at, expires_at),
         c AS (INSERT INTO message_contents (message_id, team_id, body)
               SELECT id, $2, convert_to('{"backlog":true,"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}', 'UTF8') FROM m),
         d AS (
           INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                                   expires_at, body_bytes, content_type, delivery_units, created_at, updated_at)
           SELECT 'wdd_backlog_' || substr(m.id, 13) || '_' || e.ord, $2, $3, m.id, e.id, 'bench.event', 'queued',
                  m.deliver_at, m.expires_at, 64, 'application/json', 1, now(), now()
             FROM m CROSS JOIN unnest($8::text[]) WITH ORDINALITY AS e(id, ord)
           RETURNING id, endpoint_id, next_attempt_at, expires_at)
         INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at)
         SELECT d.id, d.endpoint_id, d.next_attempt_at, d.expires_at FROM d`,
        [batch, team.teamId, team.tenantId, key, messages, endpointIds.length, RATE_VERSION, endpointIds],
      );
      inserted += messages * endpointIds.length;
    }
    await client.query(
      `INSERT INTO endpoint_queue_counts AS q (endpoint_id, shard, pending)
         SELECT endpoint_id, 0, count(*) FROM deliveries WHERE id LIKE 'wdd_backlog_%' GROUP BY endpoint_id
       ON CONFLICT (endpoint_id, shard) DO UPDATE SET pending = q.pending + EXCLUDED.pending`,
    );
    // A backlog that has been there a while has been vacuumed and analysed; measure that state, not a fresh bulk load.
    for (const table of ['messages', 'message_contents', 'deliveries', 'delivery_queue'])
      await client.query(`VACUUM ANALYZE ${table}`);
  } finally {
    await client.end();
  }
  return { inserted, seconds: (Date.now() - started) / 1000 };
}

async function startHarness(): Promise<Harness & { stop(): Promise<void> }> {
  // BENCH_POSTGRES_URL + BENCH_POSTGRES_DIR: a Postgres started by hand (for example with pg_stat_statements
  // preloaded, see docs/benchmarks.md); the benchmark uses a fresh database on it. Otherwise an embedded cluster.
  const external = process.env['BENCH_POSTGRES_URL'];
  const stops: (() => Promise<void>)[] = [];
  let postgresDir = process.env['BENCH_POSTGRES_DIR'] ?? '';
  let databaseUrl: string;
  if (external) {
    const url = new URL(external);
    url.pathname = `/bench_delivery_${process.pid}`;
    databaseUrl = url.toString();
  } else {
    const postgresTmp = mkdtempSync(path.join(tmpdir(), 'svc-bench-delivery-pg-'));
    const cluster = await startEmbeddedPostgres({ dataDir: postgresTmp, persistent: false });
    databaseUrl = cluster.url.replace(/\/postgres$/, '/bench_delivery');
    postgresDir = cluster.dataDir;
    stops.push(async () => {
      await cluster.stop();
      rmSync(postgresTmp, { recursive: true, force: true });
    });
  }
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => console.error(error));
  };
  try {
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
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
      SVC_LIMIT_SERVICE_CONCURRENCY: '2000',
      SVC_LIMIT_DISPATCH_RATE: '100000',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
    };
    const server = startService('server', 'apps/server/src/main.ts', env, await freePort());
    stops.push(() => stopService(server));
    const origin = `http://127.0.0.1:${port}`;
    await waitFor('server', async () => (await fetch(`${origin}/readyz`)).ok, server);
    const worker = startService('worker', 'apps/worker/src/main.ts', env, await freePort());
    stops.push(() => stopService(worker));
    await waitFor('worker probe', async () => (await probeStats(worker)).round_trips > 0, worker);
    const core = await openCore(testCoreOptions(databaseUrl, systemClock, { sealingKey, poolSize: 4 }));
    stops.push(() => core.close());
    return { origin, receivers, server, worker, postgresDir, databaseUrl, core, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The ceilings, measured at the start and again at the end: the figures are read against their mean. */
async function measureCeilings(h: Harness): Promise<{ commits: number; posts: number }> {
  const seconds = Math.min(SECONDS, 5);
  const commits = await runLoad<{ commits_per_s: number }>({
    kind: 'commits',
    databaseUrl: h.databaseUrl,
    poolSize: SERVER_POOL_SIZE,
    seconds,
    startAt: Date.now(),
  });
  const posts = await runLoad<{ posts_per_s: number }>({
    kind: 'posts',
    url: h.receivers.url('fast', 'ceiling'),
    concurrency: 32,
    seconds,
    startAt: Date.now(),
  });
  return { commits: commits.commits_per_s, posts: posts.posts_per_s };
}

/** One message to each team, delivered: the worker runs and every endpoint answers. */
async function warmUp(h: Harness, teams: BenchTeam[]): Promise<void> {
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

export async function runDeliveryBench(): Promise<{ delivery: DeliveryFigures; report: string }> {
  const h = await startHarness();
  const lines: string[] = [];
  try {
    const log = (line: string) => {
      console.log(line);
      lines.push(line);
    };
    console.log('delivery: creating teams, tenants, event types and endpoints');
    const groupA = await createTeams(h.core, h.origin, h.receivers, 'a', FANOUT1_TEAMS, 1);
    const groupB = await createTeams(h.core, h.origin, h.receivers, 'b', FANOUT10_TEAMS, 10);
    const backlogTeams = await createTeams(h.core, h.origin, h.receivers, 'backlog', BACKLOG_TEAMS, 10);
    await warmUp(h, [...groupA, ...groupB]);

    const rss: string[] = [];
    const noteRss = (phase: string) =>
      rss.push(`${phase} ${round(rssMb(h.server.child.pid!))}/${round(rssMb(h.worker.child.pid!))}`);
    noteRss('set-up');
    console.log('delivery: ceilings');
    const first = await measureCeilings(h);
    console.log('delivery: latency at 500 messages/s');
    const latency = await latencyAt500(h, groupA);
    noteRss('latency');
    console.log('delivery: (b) fan-out 10 and (c) with one slow endpoint, alternating');
    const { b, c, slowDeliveries } = await fanout10WithAndWithoutSlow(h, groupB);
    noteRss('(b)/(c)');
    console.log('delivery: (a) fan-out 1');
    const a = await fanout1(h, groupA, 'fanout1');
    noteRss('(a)');
    console.log(`delivery: (d) inserting a backlog of ${BACKLOG.toLocaleString('en')} pending deliveries`);
    const backlog = await insertBacklog(h, backlogTeams, BACKLOG);
    console.log(
      `delivery: (d) fan-out 1 with ${backlog.inserted.toLocaleString('en')} pending (${round(backlog.seconds)} s to insert)`,
    );
    const d = await fanout1(h, groupA, 'fanout1-backlog');
    noteRss('(d)');
    console.log('delivery: ceilings again');
    const second = await measureCeilings(h);
    const commits = { commits_per_s: (first.commits + second.commits) / 2 };
    const posts = { posts_per_s: (first.posts + second.posts) / 2 };

    const figures: DeliveryFigures = {
      fanout1: {
        admitted_per_s: round(a.admittedPerS),
        delivered_per_s: round(a.deliveredPerS),
        rejected: a.rejected,
        drain_s: round(a.drainS),
        cpu_ms_per_message: {
          server: round(a.cpu.server, 2),
          worker: round(a.cpu.worker, 2),
          postgres: round(a.cpu.postgres, 2),
        },
      },
      fanout10: { admitted_per_s: round(b.admittedPerS), deliveries_per_s: round(b.fastPerS) },
      latency_at_500: {
        p50_ms: latency.p50,
        p99_ms: latency.p99,
        admitted_per_s: round(latency.admittedPerS),
        undelivered: latency.undelivered,
      },
      slow_endpoint: {
        fast_pace_ratio: round(c.fastPerS / Math.max(1e-9, b.fastPerS), 3),
        fast_deliveries_per_s: round(c.fastPerS),
        slow_deliveries: slowDeliveries,
      },
      backlog: {
        cost_ratio: round(d.cpuMsPerMessage / Math.max(1e-9, a.cpuMsPerMessage), 3),
        size: backlog.inserted,
        setup_s: round(backlog.seconds),
        cpu_ms_per_message_without: round(a.cpuMsPerMessage, 2),
        cpu_ms_per_message_with: round(d.cpuMsPerMessage, 2),
        admitted_per_s_with: round(d.admittedPerS),
        delivered_per_s_with: round(d.deliveredPerS),
      },
      peak_rss_mb: { server: round(peakRssMb(h.server.child.pid!)), worker: round(peakRssMb(h.worker.child.pid!)) },
      round_trips_per_message: round(a.roundTripsPerMessage, 2),
      round_trips_per_delivery: round(a.roundTripsPerDelivery, 2),
      ceiling: { commits_per_s: round(commits.commits_per_s), posts_per_s: round(posts.posts_per_s) },
    };

    const row = (name: string, value: string, target: string, ratio: string) =>
      log(`${name.padEnd(48)}${value.padStart(12)}  ${target.padEnd(12)}${ratio}`);
    const f = figures;
    log('\ndelivery figure                                        value  target      vs ceiling');
    row(
      '(a) fan-out 1: messages admitted/s',
      f.fanout1.admitted_per_s.toFixed(1),
      '>= 1000',
      `${(f.fanout1.admitted_per_s / f.ceiling.commits_per_s).toFixed(3)} of commits/s`,
    );
    row(
      '(a) fan-out 1: deliveries completed/s',
      f.fanout1.delivered_per_s.toFixed(1),
      '>= 1000',
      `${(f.fanout1.delivered_per_s / f.ceiling.posts_per_s).toFixed(3)} of posts/s`,
    );
    row(
      '(b) fan-out 10: deliveries completed/s',
      f.fanout10.deliveries_per_s.toFixed(1),
      '>= 2000',
      `${(f.fanout10.deliveries_per_s / f.ceiling.posts_per_s).toFixed(3)} of posts/s`,
    );
    row(
      `accept-to-receiver p50 at 500/s offered (${f.latency_at_500.admitted_per_s}/s got)`,
      `${f.latency_at_500.p50_ms} ms`,
      '',
      '',
    );
    row(
      'accept-to-receiver p99 at 500/s offered',
      `${f.latency_at_500.p99_ms} ms`,
      '<= 150 ms',
      f.latency_at_500.undelivered ? `${f.latency_at_500.undelivered} undelivered after 60 s` : '',
    );
    row(
      '(c) fast endpoints pace with a 2 s endpoint / (b)',
      f.slow_endpoint.fast_pace_ratio.toFixed(3),
      '>= 0.9',
      `${f.slow_endpoint.fast_deliveries_per_s}/s`,
    );
    row(
      `(d) cost with ${f.backlog.size.toLocaleString('en')} pending / without`,
      f.backlog.cost_ratio.toFixed(3),
      '<= 1.2',
      `CPU ms/message ${f.backlog.cpu_ms_per_message_without} -> ${f.backlog.cpu_ms_per_message_with}`,
    );
    row(
      '(d) with backlog: admitted/s, delivered/s',
      `${f.backlog.admitted_per_s_with}, ${f.backlog.delivered_per_s_with}`,
      '',
      '',
    );
    row('Postgres round trips per admitted message', String(f.round_trips_per_message), '', 'server process');
    row('Postgres round trips per delivery', String(f.round_trips_per_delivery), '', 'worker process');
    row('peak RSS server / worker (MB)', `${f.peak_rss_mb.server} / ${f.peak_rss_mb.worker}`, '<= 300', '');
    row(
      'ceiling: single-row commits/s (pool 10)',
      f.ceiling.commits_per_s.toFixed(1),
      '',
      `first ${round(first.commits)}, last ${round(second.commits)}`,
    );
    row(
      'ceiling: raw undici POSTs/s to the receiver',
      f.ceiling.posts_per_s.toFixed(1),
      '',
      `first ${round(first.posts)}, last ${round(second.posts)}`,
    );
    log(`RSS MB server/worker after each phase: ${rss.join(', ')}`);
    log(
      `\n(a) POST /v1/messages p50 ${a.requestP50} ms, p99 ${a.requestP99} ms; drained ${round(a.drainS)} s after the load`,
    );
    for (const [label, run] of [
      ['without', a],
      ['with', d],
    ] as const)
      log(
        `(a/d) CPU ms per message ${label} the backlog: server ${round(run.cpu.server, 2)}, worker ${round(run.cpu.worker, 2)}, Postgres ${round(run.cpu.postgres, 2)}, in all ${round(run.cpu.total, 2)}`,
      );
    log(
      `(b/c) worker round trips per fast delivery: ${round(b.workerRoundTripsPerFastDelivery, 2)} without the slow endpoint, ${round(c.workerRoundTripsPerFastDelivery, 2)} with it; ${slowDeliveries} deliveries reached it`,
    );
    log('(a) server round trips per admitted message, by statement:');
    for (const [statement, n] of a.serverStatements.slice(0, 12)) log(`  ${n.toFixed(2).padStart(6)}  ${statement}`);
    log('(a) worker round trips per delivery, by statement:');
    for (const [statement, n] of a.workerStatements.slice(0, 14)) log(`  ${n.toFixed(2).padStart(6)}  ${statement}`);
    for (const [label, run] of [
      ['(a)', a],
      ['(d)', d],
    ] as const) {
      if (run.postgresTime.length === 0) continue;
      log(`${label} Postgres execution ms per admitted message by statement (pg_stat_statements; calls per message):`);
      for (const [statement, ms, calls] of run.postgresTime)
        log(`  ${ms.toFixed(3).padStart(7)} ms ${calls.toFixed(2).padStart(6)}  ${statement}`);
    }
    for (const summary of [...a.profiles, ...d.profiles]) log(`\n${summary}`);
    return { delivery: figures, report: lines.join('\n') };
  } finally {
    await h.stop();
  }
}
