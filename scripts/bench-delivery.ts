/**
 * The delivery benchmark of `npm run bench` (issue 7 §5; docs/benchmarks.md explains every figure). It builds the
 * production JavaScript, starts its own Postgres, the built server and worker as processes, loopback receivers (in
 * this process) and publishes through POST /v1/messages from a separate load process:
 *
 *   (a) fan-out 1, closed loop: messages admitted/s and delivered/s; round trips and CPU per message
 *   latency: accept-to-receiver p50/p99 at an offered 500 messages/s (fan-out 1)
 *   (b) fan-out 10, closed loop: deliveries/s
 *   (c) as (b) plus one endpoint answering after 2 s: the fast endpoints' pace over their pace in (b)
 *   (e) as (b) plus one endpoint that never answers, 10,000 deliveries queued behind its open circuit: the fast
 *       endpoints' pace over (b), and the worker CPU it costs
 *   scale: (b) with 3 worker processes
 *   ordered: one ordered endpoint answering at once drains a queue (one delivery at a time, in order): deliveries/s
 *       vs one raw POST and one raw commit in turn, each measured one at a time
 *   (d) as (a) with a backlog of pending deliveries (default 1,000,000) inserted with SQL: cost with over without
 *   durable: (a) on a second cluster with fsync=on, and its commit ceiling
 *
 * and, in the same run, the ceilings: single-row Postgres commits/s with the server's pool size, raw undici
 * POSTs/s to the same receiver. The machine is shared and noisy, so figures are read against those ceilings.
 * BENCH_SCENARIOS (comma-separated, from SCENARIOS below) runs some of them; the others keep their figures from
 * the previous .tmp/bench.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  addEndpoint,
  createTeams,
  updateEndpoint,
  deleteEndpoint,
  peakRssMb,
  probeProfile,
  probeStats,
  rssMb,
  sleep,
  buildServices,
  statementDelta,
  type BenchTeam,
  type ServiceBuild,
} from './bench-delivery-env.js';
import {
  cpuPerMessage,
  drain,
  measureCommits,
  measurePosts,
  publishTeams,
  publishWindow,
  readCpu,
  startExtraWorker,
  startHarness,
  stopExtraWorkers,
  waitForPartitionOwners,
  warmUp,
  workerStats,
  type Harness,
} from './bench-delivery-harness.js';
import {
  formatDeliveryReport,
  type DeliveryFigures,
  type Fanout10Summary,
  type RunDetails,
} from './bench-delivery-report.js';
import { insertBacklog, queueBehindOpenCircuit, vacuumDeliveryTables } from './bench-delivery-seed.js';
import { formatSummary, summariseProfile, type CpuProfile } from './bench-profile.js';
import { ROOT } from './local-runtime.js';

export type { DeliveryFigures } from './bench-delivery-report.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const BACKLOG = Number(process.env['BENCH_BACKLOG'] ?? 1_000_000);
const PROFILE = process.env['BENCH_PROFILE'] === '1';
const FANOUT1_TEAMS = 24;
const FANOUT10_TEAMS = 10;
const BACKLOG_TEAMS = 10;
const BACKLOG_SETUP_BUDGET_MS = 110_000;
/** Deliveries queued behind the dead endpoint's open circuit in (e). */
const DEAD_QUEUED = 10_000;

const SCENARIOS = ['a', 'latency', 'b', 'c', 'd', 'e', 'scale', 'ordered', 'durable'] as const;
/** Messages queued for the ordered endpoint before it is enabled. */
const ORDERED_QUEUED = Number(process.env['BENCH_ORDERED'] ?? 3000);
type Scenario = (typeof SCENARIOS)[number];

/** BENCH_SCENARIOS, with what each needs: (c), (e) and scale are read against (b), (d) against (a). */
function selectedScenarios(value: string | undefined): Set<Scenario> {
  if (!value) return new Set(SCENARIOS);
  const picked = new Set<Scenario>();
  for (const name of value.split(',').map((s) => s.trim())) {
    if (!(SCENARIOS as readonly string[]).includes(name))
      throw new Error(`BENCH_SCENARIOS: ${name} is not one of ${SCENARIOS.join(', ')}`);
    picked.add(name as Scenario);
  }
  if (picked.has('c') || picked.has('e') || picked.has('scale')) picked.add('b');
  if (picked.has('d')) picked.add('a');
  return picked;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
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
  const accepted = window.load.accepted ?? [];
  const started = Math.min(...accepted.map(([, createdAt]) => createdAt));
  const timed = accepted
    .map(([id, createdAt]) => {
      const arrived = h.receivers.arrivals.get(id);
      if (arrived === undefined) undelivered += 1;
      return { id, ms: (arrived ?? waitedUntil) - createdAt, at_s: (createdAt - started) / 1000 };
    })
    .sort((a, b) => a.ms - b.ms);
  // The slowest's stages: from acceptance to the worker's attempt starting (wake-up and claim), then the POST.
  const slowest = timed.slice(-5).reverse();
  const attempts: { message_id: string; started_at: Date; created_at: Date; duration_ms: number }[] =
    await h.core.services.db.query(
      `SELECT d.message_id, a.started_at, m.created_at, a.duration_ms
         FROM deliveries d JOIN attempts a ON a.delivery_id = d.id JOIN messages m ON m.id = d.message_id
        WHERE d.message_id = ANY ($1) AND a.number = 1`,
      [slowest.map((t) => t.id)],
    );
  const stages = new Map(
    attempts.map((a) => [
      a.message_id,
      { claimed_after_ms: a.started_at.getTime() - a.created_at.getTime(), post_ms: a.duration_ms },
    ]),
  );
  const latencies = timed.map((t) => t.ms);
  // Where the tail is: each second's p99 (a stall shows as one or two seconds far above the rest) and the five
  // slowest with when in the window they were accepted.
  const seconds = Math.ceil(SECONDS);
  const bySecond = Array.from({ length: seconds }, (_, i) =>
    timed.filter((t) => t.at_s >= i && t.at_s < i + 1).map((t) => t.ms),
  );
  return {
    p50: percentile(latencies, 0.5),
    p90: percentile(latencies, 0.9),
    p99: percentile(latencies, 0.99),
    p99BySecond: bySecond.map((ms) => percentile(ms, 0.99)),
    slowest: slowest.map((t) => ({ ms: t.ms, at_s: Math.round(t.at_s * 10) / 10, ...stages.get(t.id) })),
    admittedPerS: window.load.admitted / (window.load.elapsed_ms / 1000),
    undelivered,
  };
}

/** Fan-out 10 closed loop; the pace, CPU and worker statements are those of the 100 fast (`b-`) endpoints. */
async function fanout10(h: Harness, teams: BenchTeam[], durationMs: number) {
  const fast = (name: string) => name.startsWith('b-');
  const fanout = teams.reduce((n, t) => n + t.endpoints.length, 0) / teams.length;
  const before = h.receivers.total(fast);
  const worker0 = await workerStats(h);
  const statementsReset = await resetPgStatements(h);
  const window = await publishWindow(h, { teams: publishTeams(teams), perTeam: 2, durationMs }, fast);
  const drainS = await drain(h, fast, before + window.load.admitted * fanout, 90);
  const worker1 = await workerStats(h);
  const fastDelivered = h.receivers.total(fast) - before;
  return {
    postgresTime: statementsReset ? await readPgStatements(h, fastDelivered) : [],
    admittedPerS: window.load.admitted / (window.load.elapsed_ms / 1000),
    fastPerS: window.deliveredPerS,
    drainS,
    workerCpuMsPerS: window.cpuMsPerS.worker,
    postgresCpuMsPerS: window.cpuMsPerS.postgres,
    fastDelivered,
    workerRoundTrips: worker1.round_trips - worker0.round_trips,
    workerStatements: statementDelta(worker0, worker1),
  };
}

type Fanout10Run = Awaited<ReturnType<typeof fanout10>>;

/** The mean of runs of one kind; worker round trips and statements per fast delivery over all of them. */
function summarise(runs: Fanout10Run[]): Fanout10Summary {
  const mean = (pick: (r: Fanout10Run) => number) => runs.reduce((sum, r) => sum + pick(r), 0) / runs.length;
  const delivered = Math.max(
    1,
    runs.reduce((n, r) => n + r.fastDelivered, 0),
  );
  const statements = new Map<string, number>();
  for (const run of runs)
    for (const [key, n] of run.workerStatements) statements.set(key, (statements.get(key) ?? 0) + n / delivered);
  // Postgres time per fast delivery by statement over all the runs (each run's figure weighted by its deliveries).
  const postgres = new Map<string, [number, number]>();
  for (const run of runs)
    for (const [query, ms, calls] of run.postgresTime) {
      const [m, c] = postgres.get(query) ?? [0, 0];
      postgres.set(query, [m + (ms * run.fastDelivered) / delivered, c + (calls * run.fastDelivered) / delivered]);
    }
  return {
    postgresTime: [...postgres]
      .map(([query, [ms, calls]]): [string, number, number] => [query, ms, calls])
      .sort((x, y) => y[1] - x[1]),
    admittedPerS: mean((r) => r.admittedPerS),
    fastPerS: mean((r) => r.fastPerS),
    workerRoundTripsPerFastDelivery: runs.reduce((n, r) => n + r.workerRoundTrips, 0) / delivered,
    workerCpuMsPerS: mean((r) => r.workerCpuMsPerS),
    postgresCpuMsPerS: mean((r) => r.postgresCpuMsPerS),
    workerStatements: statements,
  };
}

/**
 * (b) alternates with (c) and (e) twice (b, c, e, b, c, e), so that drift in the machine's load falls on all alike.
 * (c) adds an endpoint answering after 2 s to the first team (its messages fan out to 11); (e) adds one that never
 * answers, with DEAD_QUEUED deliveries due behind its open circuit. Each is deleted after its run.
 */
async function fanout10Passes(h: Harness, teams: BenchTeam[], run: { c: boolean; e: boolean }) {
  const durationMs = (SECONDS * 1000) / 2;
  const owner = teams[0]!;
  const runs: { b: Fanout10Run[]; c: Fanout10Run[]; e: Fanout10Run[] } = { b: [], c: [], e: [] };
  for (let pass = 0; pass < 2; pass += 1) {
    runs.b.push(await fanout10(h, teams, durationMs));
    if (run.c) {
      const slow = await addEndpoint(
        h.origin,
        owner.authorization,
        owner.tenantId,
        h.receivers.url('slow', `slow-${pass}`),
      );
      runs.c.push(await fanout10(h, teams, durationMs));
      await deleteEndpoint(h.origin, owner.authorization, slow);
    }
    if (run.e) {
      const dead = await addEndpoint(
        h.origin,
        owner.authorization,
        owner.tenantId,
        h.receivers.url('hang', `dead-${pass}`),
      );
      await queueBehindOpenCircuit(h.databaseUrl, owner, dead.id, DEAD_QUEUED, 50_000 + pass);
      runs.e.push(await fanout10(h, teams, durationMs));
      // Cancels its deliveries; the vacuum of those rows must not fall into the next (b).
      await deleteEndpoint(h.origin, owner.authorization, dead);
      await vacuumDeliveryTables(h.databaseUrl);
    }
  }
  await sleep(2000);
  return {
    b: summarise(runs.b),
    c: run.c ? summarise(runs.c) : undefined,
    e: run.e ? summarise(runs.e) : undefined,
    slowDeliveries: h.receivers.total((name) => name.startsWith('slow-')),
    deadAttempts: h.receivers.total((name) => name.startsWith('dead-')),
  };
}

/** (b) with two more worker processes, once the three share the partitions; back to one worker afterwards. */
async function fanout10WithThreeWorkers(h: Harness, teams: BenchTeam[]) {
  try {
    await startExtraWorker(h, 'worker-2');
    await startExtraWorker(h, 'worker-3');
    await waitForPartitionOwners(h, 3);
    return summarise([await fanout10(h, teams, SECONDS * 1000)]);
  } finally {
    await stopExtraWorkers(h);
    await waitForPartitionOwners(h, 1);
  }
}

/**
 * One ordered endpoint, paused while ORDERED_QUEUED messages are published to it, then enabled: the time until the
 * last arrives gives its deliveries per second, one at a time. Its ceiling, measured right after on the same
 * machine: a raw POST and a raw single-row commit in turn, each one at a time (a delivery needs at least both).
 */
async function orderedDrain(h: Harness) {
  const [team] = await createTeams(h.core, h.origin, h.receivers, 'ordered', 1, 0);
  const receiver = 'ordered-0';
  const endpoint = await addEndpoint(h.origin, team!.authorization, team!.tenantId, h.receivers.url('fast', receiver));
  const paused = await updateEndpoint(h.origin, team!.authorization, endpoint, {
    ordering: 'ordered',
    status: 'paused',
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = ++next; n <= ORDERED_QUEUED; n = ++next)
        for (;;) {
          const response = await fetch(`${h.origin}/v1/messages`, {
            method: 'POST',
            headers: {
              authorization: team!.authorization,
              'content-type': 'application/json',
              'idempotency-key': `ordered-${n}`,
            },
            body: JSON.stringify({ tenant_id: team!.tenantId, event_type: team!.eventType, payload: { n } }),
          });
          if (response.status === 202) break;
          if (response.status !== 429) throw new Error(`ordered: POST /v1/messages ${response.status}`);
          await sleep(50);
        }
    }),
  );
  await updateEndpoint(h.origin, team!.authorization, paused, { status: 'enabled' });
  const seconds = await drain(h, (name) => name === receiver, ORDERED_QUEUED, 180);
  const arrived = h.receivers.sequences.get(receiver) ?? [];
  const inOrder = arrived.length === ORDERED_QUEUED && arrived.every((n, i) => n === i + 1);
  const ceilingSeconds = Math.min(SECONDS, 5);
  const posts = await measurePosts(h, ceilingSeconds, 1);
  const commits = await measureCommits(h, ceilingSeconds, 1);
  return { seconds, posts, commits, inOrder };
}

/** (a) on a deployment of its own whose cluster runs with fsync=on, between two commit ceilings on it. */
async function durableFanout1(build: ServiceBuild) {
  const h = await startHarness(build, { durable: true });
  try {
    const [settings]: { fsync: string; synchronous_commit: string }[] = await h.core.services.db.query(
      `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit`,
    );
    if (settings?.fsync !== 'on' || settings.synchronous_commit !== 'on')
      throw new Error(
        `durable: the cluster runs with ${JSON.stringify(settings)}, not fsync and synchronous_commit on`,
      );
    console.log('delivery: durable: creating teams');
    const teams = await createTeams(h.core, h.origin, h.receivers, 'a', FANOUT1_TEAMS, 1);
    await warmUp(h, teams);
    const ceilingSeconds = Math.min(SECONDS, 5);
    const first = await measureCommits(h, ceilingSeconds);
    console.log('delivery: durable: (a) fan-out 1 with fsync=on');
    const a = await fanout1(h, teams, 'fanout1');
    const last = await measureCommits(h, ceilingSeconds);
    return {
      a,
      first,
      last,
      settings: `fsync=${settings.fsync}, synchronous_commit=${settings.synchronous_commit}`,
      peakRss: { server: round(peakRssMb(h.server.child.pid!)), worker: round(peakRssMb(h.worker.child.pid!)) },
    };
  } finally {
    await h.stop();
  }
}

const cpuFigures = (cpu: { server: number; worker: number; postgres: number; total: number }) => ({
  server: round(cpu.server, 2),
  worker: round(cpu.worker, 2),
  postgres: round(cpu.postgres, 2),
  total: round(cpu.total, 2),
});

/**
 * Runs the selected scenarios and answers the `delivery` figures: those of the scenarios run, over `previous` (the
 * figures in .tmp/bench.json) for the others.
 */
export async function runDeliveryBench(
  previous: Partial<DeliveryFigures> = {},
): Promise<{ delivery: Partial<DeliveryFigures>; report: string }> {
  const run = selectedScenarios(process.env['BENCH_SCENARIOS']);
  console.log('delivery: building the production JavaScript');
  const build = await buildServices();
  try {
    const h = await startHarness(build, { durable: false });
    const f: Partial<DeliveryFigures> = {};
    const d: RunDetails = {
      scenarios: SCENARIOS.filter((s) => run.has(s)),
      ceilings: { first: { commits: 0, posts: 0 }, last: { commits: 0, posts: 0 } },
      rss: [],
      profiles: [],
    };
    try {
      console.log('delivery: creating teams, tenants, event types and endpoints');
      const needA = run.has('a') || run.has('latency');
      const groupA = needA ? await createTeams(h.core, h.origin, h.receivers, 'a', FANOUT1_TEAMS, 1) : [];
      const groupB = run.has('b') ? await createTeams(h.core, h.origin, h.receivers, 'b', FANOUT10_TEAMS, 10) : [];
      const backlogTeams = run.has('d')
        ? await createTeams(h.core, h.origin, h.receivers, 'backlog', BACKLOG_TEAMS, 10)
        : [];
      await warmUp(h, [...groupA, ...groupB]);

      const noteRss = (phase: string) =>
        d.rss.push(`${phase} ${round(rssMb(h.server.child.pid!))}/${round(rssMb(h.worker.child.pid!))}`);
      noteRss('set-up');
      const ceilingSeconds = Math.min(SECONDS, 5);
      console.log('delivery: ceilings');
      d.ceilings.first = {
        commits: await measureCommits(h, ceilingSeconds),
        posts: await measurePosts(h, ceilingSeconds),
      };
      if (run.has('latency')) {
        console.log('delivery: latency at 500 messages/s');
        const latency = await latencyAt500(h, groupA);
        f.latency_at_500 = {
          p50_ms: latency.p50,
          p90_ms: latency.p90,
          p99_ms: latency.p99,
          p99_by_second_ms: latency.p99BySecond,
          slowest: latency.slowest,
          admitted_per_s: round(latency.admittedPerS),
          undelivered: latency.undelivered,
        };
        noteRss('latency');
      }
      if (run.has('b')) {
        const also = [run.has('c') ? '(c) with one slow endpoint' : '', run.has('e') ? '(e) with a dead one' : ''];
        console.log(`delivery: (b) fan-out 10 ${also.filter(Boolean).join(' and ')}, alternating`);
        const passes = await fanout10Passes(h, groupB, { c: run.has('c'), e: run.has('e') });
        const { b, c, e } = passes;
        f.fanout10 = { admitted_per_s: round(b.admittedPerS), deliveries_per_s: round(b.fastPerS) };
        d.fanout10 = { b, c, e, slowDeliveries: passes.slowDeliveries };
        if (c)
          f.slow_endpoint = {
            fast_pace_ratio: round(c.fastPerS / Math.max(1e-9, b.fastPerS), 3),
            fast_deliveries_per_s: round(c.fastPerS),
            slow_deliveries: passes.slowDeliveries,
          };
        if (e)
          f.dead_endpoint = {
            fast_pace_ratio: round(e.fastPerS / Math.max(1e-9, b.fastPerS), 3),
            fast_deliveries_per_s: round(e.fastPerS),
            worker_cpu_ms_per_s: round(e.workerCpuMsPerS - b.workerCpuMsPerS),
            worker_cpu_ms_per_s_without: round(b.workerCpuMsPerS),
            worker_cpu_ms_per_s_with: round(e.workerCpuMsPerS),
            postgres_cpu_ms_per_s: round(e.postgresCpuMsPerS - b.postgresCpuMsPerS),
            queued: DEAD_QUEUED,
            attempts: passes.deadAttempts,
          };
        noteRss('(b)/(c)/(e)');
        if (run.has('scale')) {
          console.log('delivery: (b) with 3 worker processes');
          const three = await fanout10WithThreeWorkers(h, groupB);
          f.scale = {
            workers3: {
              deliveries_per_s: round(three.fastPerS),
              admitted_per_s: round(three.admittedPerS),
              ratio_to_one_worker: round(three.fastPerS / Math.max(1e-9, b.fastPerS), 3),
            },
          };
          d.scale = {
            workerCpuMsPerS: three.workerCpuMsPerS,
            workerRoundTripsPerFastDelivery: three.workerRoundTripsPerFastDelivery,
          };
          noteRss('scale');
        }
      }
      if (run.has('ordered')) {
        console.log(`delivery: ordered endpoint draining ${ORDERED_QUEUED.toLocaleString('en')} queued messages`);
        const o = await orderedDrain(h);
        f.ordered = {
          deliveries_per_s: round(ORDERED_QUEUED / o.seconds),
          queued: ORDERED_QUEUED,
          posts_one_at_a_time_per_s: round(o.posts),
          commits_one_at_a_time_per_s: round(o.commits),
          ceiling_per_s: round(1 / (1 / o.posts + 1 / o.commits)),
          in_order: o.inOrder,
        };
        noteRss('ordered');
      }
      if (run.has('a')) {
        console.log('delivery: (a) fan-out 1');
        const a = await fanout1(h, groupA, 'fanout1');
        noteRss('(a)');
        f.fanout1 = {
          admitted_per_s: round(a.admittedPerS),
          delivered_per_s: round(a.deliveredPerS),
          rejected: a.rejected,
          drain_s: round(a.drainS),
          cpu_ms_per_message: cpuFigures(a.cpu),
        };
        f.round_trips_per_message = round(a.roundTripsPerMessage, 2);
        f.round_trips_per_delivery = round(a.roundTripsPerDelivery, 2);
        d.fanout1 = {
          requestP50: a.requestP50,
          requestP99: a.requestP99,
          drainS: a.drainS,
          serverStatements: a.serverStatements,
          workerStatements: a.workerStatements,
          postgresTime: a.postgresTime,
        };
        d.profiles.push(...a.profiles);
        if (run.has('d')) {
          console.log(`delivery: (d) inserting a backlog of ${BACKLOG.toLocaleString('en')} pending deliveries`);
          const backlog = await insertBacklog(h.databaseUrl, backlogTeams, BACKLOG, BACKLOG_SETUP_BUDGET_MS);
          console.log(
            `delivery: (d) fan-out 1 with ${backlog.inserted.toLocaleString('en')} pending (${round(backlog.seconds)} s to insert)`,
          );
          const withBacklog = await fanout1(h, groupA, 'fanout1-backlog');
          noteRss('(d)');
          f.backlog = {
            cost_ratio: round(withBacklog.cpu.total / Math.max(1e-9, a.cpu.total), 3),
            size: backlog.inserted,
            setup_s: round(backlog.seconds),
            cpu_ms_per_message_without: round(a.cpu.total, 2),
            cpu_ms_per_message_with: round(withBacklog.cpu.total, 2),
            admitted_per_s_with: round(withBacklog.admittedPerS),
            delivered_per_s_with: round(withBacklog.deliveredPerS),
          };
          d.fanout1.withBacklog = { cpu: withBacklog.cpu, postgresTime: withBacklog.postgresTime };
          d.profiles.push(...withBacklog.profiles);
        }
      }
      console.log('delivery: ceilings again');
      d.ceilings.last = {
        commits: await measureCommits(h, ceilingSeconds),
        posts: await measurePosts(h, ceilingSeconds),
      };
      f.ceiling = {
        commits_per_s: round((d.ceilings.first.commits + d.ceilings.last.commits) / 2),
        posts_per_s: round((d.ceilings.first.posts + d.ceilings.last.posts) / 2),
      };
      f.peak_rss_mb = { server: round(peakRssMb(h.server.child.pid!)), worker: round(peakRssMb(h.worker.child.pid!)) };
    } finally {
      await h.stop();
    }
    // After the first deployment has stopped, so that the two never share the machine.
    if (run.has('durable')) {
      console.log('delivery: durable: a second cluster with fsync=on');
      const durable = await durableFanout1(build);
      f.durable = {
        fanout1: {
          admitted_per_s: round(durable.a.admittedPerS),
          delivered_per_s: round(durable.a.deliveredPerS),
          cpu_ms_per_message: cpuFigures(durable.a.cpu),
        },
        ceiling: { commits_per_s: round((durable.first + durable.last) / 2) },
      };
      d.durable = { settings: durable.settings, first: durable.first, last: durable.last, peakRss: durable.peakRss };
      d.profiles.push(...durable.a.profiles);
    }
    const lines = formatDeliveryReport(f, d);
    for (const line of lines) console.log(line);
    return { delivery: { ...previous, ...f }, report: lines.join('\n') };
  } finally {
    build.remove();
  }
}
