/**
 * The `fairness` scenario of `npm run bench` (docs/benchmarks.md, "Fairness"; docs/delivery.md, "Fairness"), at the
 * spec's default limits (no SVC_LIMIT_* raised: service_concurrency 6 across every worker, max_concurrency 3):
 *
 *   alone        tenant C publishes 5 messages/s to a receiver that answers at once: accept-to-receiver p50/p99
 *   two_slow     the same beside 2 other teams' receivers answering in 9 s, 200 messages queued each: p99 over alone
 *   six_slow     beside 6 such tenants spread over 3 other teams
 *   two_workers  two_slow with 2 worker processes; the receivers never see more than 6 requests at once
 *   hot_team     team Y publishes 5/s (its publish request p99) alone, then beside team X publishing as fast as its
 *                admission limit lets it and running a bulk replay of its dead letters: p99 over alone
 *
 * Each figure is a ratio against `alone`, measured in the same run on the same processes.
 */
import { execFile, spawn } from 'node:child_process';
import {
  addEndpoint,
  createTeams,
  deleteEndpoint,
  probeStats,
  loadStartAt,
  runLoad,
  sleep,
  type BenchTeam,
  type ServiceBuild,
} from './bench-delivery-env.js';
import {
  publishTeams,
  publishWindow,
  startExtraWorker,
  startHarness,
  stopExtraWorkers,
  waitForPartitionOwners,
  type Harness,
} from './bench-delivery-harness.js';
import type { PublishResult } from './bench-delivery-load.js';

const SECONDS = Number(process.env['BENCH_FAIRNESS_SECONDS'] ?? 20);
/** The cases to run (comma-separated: two_slow, six_slow, two_workers, hot_team); all by default. */
const CASES = new Set(
  (process.env['BENCH_FAIRNESS_CASES'] ?? 'two_slow,six_slow,two_workers,hot_team').split(',').map((c) => c.trim()),
);
const SLOW_QUEUED = 200;
const PROBE_RATE = 5;
/**
 * BENCH_FAIRNESS_LEAD_MS (0 by default, the target's figure): in hot_team, team X's and team Z's load starts this
 * long before Y's probe window and runs through it, so Y meets their steady state rather than their first seconds.
 */
const LEAD_MS = Number(process.env['BENCH_FAIRNESS_LEAD_MS'] ?? 0);
/** Team Z's steady publishing, a second: about what team X gets admitted at its limit, and within Z's own. */
const STEADY_RATE = 90;
/** Dead letters of the hot team's endpoint, replayed in bulk while it publishes. */
const DEAD_LETTERS = 1000;

/** The probe's accept-to-receiver latencies, and where its tail fell in the window. */
export interface ProbeFigures {
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  undelivered: number;
  slowest: { ms: number; at_s: number }[];
}

export interface FairnessCase extends ProbeFigures {
  p99_ratio: number;
  /** The most requests open at once at the receivers while the case ran. */
  peak_in_flight: number;
}

export interface FairnessFigures {
  limits: { service_concurrency: number; max_concurrency: number };
  alone: ProbeFigures;
  /** Each case is there unless BENCH_FAIRNESS_CASES left it out. */
  two_slow?: FairnessCase;
  six_slow?: FairnessCase;
  two_workers?: FairnessCase;
  hot_team?: {
    alone_publish_p50_ms: number;
    alone_publish_p99_ms: number;
    beside_publish_p50_ms: number;
    beside_publish_p99_ms: number;
    publish_p99_ratio: number;
    hot_admitted_per_s: number;
    /** Team X's requests refused a second (its 429s: it retries them after 50 ms). */
    hot_refused_per_s: number;
    replayed: number;
    /**
     * The machine's own floor in each window: a bare HTTP round trip between two processes of their own (no service
     * code) at Y's pace. On an idle VM it is far slower than back to back, and it is part of Y's every request alone.
     */
    bare_round_trip_alone: { p50_ms: number; p99_ms: number };
    bare_round_trip_beside: { p50_ms: number; p99_ms: number };
    /**
     * Y beside team Z publishing steadily within its limits at about the rate X gets admitted (no refusals, no
     * replay): the same machine kept as busy by well-behaved work. Y's p99 beside X over this says what X's being
     * hot (its refused requests, its replay) costs Y beyond any load of that size; `publish_p99_ratio` stays the
     * target's figure.
     */
    steady_publish_p50_ms: number;
    steady_publish_p99_ms: number;
    steady_admitted_per_s: number;
    /**
     * The CPU of the load processes themselves (ms a second of their window): team X's client (16 connections
     * retrying its 429s) and team Z's. On these two cores they compete with the service for the CPU, as a customer's
     * client on a machine of its own would not.
     */
    hot_client_cpu_ms_per_s: number;
    steady_client_cpu_ms_per_s: number;
    /** Z's requests refused (any status but 202): 0 when the window is what it says. */
    steady_refused: number;
    publish_p99_over_steady: number;
  };
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/** Tenant C's messages at 5/s: accept-to-receiver latencies (an undelivered one counts as waiting until the end). */
async function probe(h: Harness, fast: BenchTeam) {
  const which = (name: string) => name.startsWith('fair-c');
  h.receivers.arrivals.clear();
  h.receivers.recording = true;
  const window = await publishWindow(
    h,
    { teams: publishTeams([fast]), perTeam: 4, rate: PROBE_RATE, durationMs: SECONDS * 1000, recordAccepted: true },
    which,
  );
  const accepted = window.load.accepted ?? [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && accepted.some(([id]) => !h.receivers.arrivals.has(id))) await sleep(50);
  h.receivers.recording = false;
  const end = Date.now();
  let undelivered = 0;
  const started = Math.min(...accepted.map(([, createdAt]) => createdAt));
  const timed = accepted
    .map(([id, createdAt]) => {
      const arrived = h.receivers.arrivals.get(id);
      if (arrived === undefined) undelivered += 1;
      return { ms: (arrived ?? end) - createdAt, at_s: Math.round((createdAt - started) / 100) / 10 };
    })
    .sort((a, b) => a.ms - b.ms);
  const latencies = timed.map((t) => t.ms);
  return {
    p50_ms: percentile(latencies, 0.5),
    p90_ms: percentile(latencies, 0.9),
    p99_ms: percentile(latencies, 0.99),
    undelivered,
    // Where the tail is: the five slowest, with when in the window they were accepted (seconds).
    slowest: timed.slice(-5).reverse(),
  };
}

/** `tenants` slow tenants (one endpoint each, answering in 9 s) spread over `teams` teams, 200 messages queued each. */
async function slowBacklog(h: Harness, prefix: string, teams: number, tenants: number) {
  const made = await createTeams(h.core, h.origin, h.receivers, prefix, teams, 0);
  const endpoints: { team: BenchTeam; tenantId: string; endpoint: { id: string; etag: string } }[] = [];
  for (let i = 0; i < tenants; i++) {
    const team = made[i % teams]!;
    const tenantId = i < teams ? team.tenantId : await addTenant(h, team, `${prefix}-t${i}`);
    const endpoint = await addEndpoint(
      h.origin,
      team.authorization,
      tenantId,
      h.receivers.url('slow9', `${prefix}-${i}`),
    );
    endpoints.push({ team, tenantId, endpoint });
  }
  await Promise.all(
    endpoints.map(async ({ team, tenantId }) => {
      for (let sent = 0; sent < SLOW_QUEUED;) {
        const batch = Math.min(10, SLOW_QUEUED - sent);
        const answers = await Promise.all(
          Array.from({ length: batch }, () => publish(h, team, tenantId, { slow: true })),
        );
        sent += answers.filter((status) => status === 202).length;
        if (answers.some((status) => status === 429)) await sleep(200);
      }
    }),
  );
  return endpoints;
}

async function addTenant(h: Harness, team: BenchTeam, externalId: string): Promise<string> {
  const response = await fetch(`${h.origin}/v1/tenants`, {
    method: 'POST',
    headers: {
      authorization: team.authorization,
      'content-type': 'application/json',
      'idempotency-key': `tenant-${externalId}`,
    },
    body: JSON.stringify({ external_id: externalId, name: externalId }),
  });
  if (response.status !== 201) throw new Error(`tenant: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

async function publish(h: Harness, team: BenchTeam, tenantId: string, payload: unknown): Promise<number> {
  const response = await fetch(`${h.origin}/v1/messages`, {
    method: 'POST',
    headers: {
      authorization: team.authorization,
      'content-type': 'application/json',
      'idempotency-key': `fair-${Math.random().toString(36).slice(2)}`,
    },
    body: JSON.stringify({ tenant_id: tenantId, event_type: team.eventType, payload }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Deletes the slow endpoints (their backlogs are canceled) and waits for the attempts in flight to end. */
async function clearSlow(h: Harness, endpoints: Awaited<ReturnType<typeof slowBacklog>>) {
  for (const { team, endpoint } of endpoints) await deleteEndpoint(h.origin, team.authorization, endpoint);
  const deadline = Date.now() + 15_000;
  while (h.receivers.open > 0 && Date.now() < deadline) await sleep(100);
}

async function besideSlow(
  h: Harness,
  fast: BenchTeam,
  alone: { p99_ms: number },
  prefix: string,
  teams: number,
  tenants: number,
) {
  h.receivers.resetPeak();
  const slow = await slowBacklog(h, prefix, teams, tenants);
  const deadline = Date.now() + 20_000;
  while (h.receivers.open < 4 && Date.now() < deadline) await sleep(100);
  const beside = await probe(h, fast);
  const peak = h.receivers.peak;
  await clearSlow(h, slow);
  return {
    ...beside,
    p99_ratio: Math.round((beside.p99_ms / Math.max(1, alone.p99_ms)) * 100) / 100,
    peak_in_flight: peak,
  };
}

/** One team publishing from a load process of its own: open loop at `rate` a second, or as fast as answers come. */
function teamLoad(
  h: Harness,
  team: BenchTeam,
  load: { perTeam: number; rate?: number; laterMs?: number; durationMs: number },
): Promise<PublishResult> {
  return runLoad<PublishResult>({
    kind: 'publish',
    origin: h.origin,
    teams: publishTeams([team]),
    perTeam: load.perTeam,
    ...(load.rate === undefined ? {} : { rate: load.rate }),
    startAt: loadStartAt(load.laterMs),
    durationMs: load.durationMs,
  });
}

/** Team Y's publish requests at 5/s: their p99 (the load process measures each request). */
function publishP99(h: Harness, team: BenchTeam, seconds = SECONDS, laterMs = 0): Promise<PublishResult> {
  return teamLoad(h, team, { perTeam: 2, rate: PROBE_RATE, laterMs, durationMs: seconds * 1000 });
}

const ECHO_SERVER = `const s = require('node:http').createServer((q, r) => r.end('ok'));
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
const PINGER = `const [port, rate, seconds] = process.argv.slice(1).map(Number);
const agent = new (require('node:http').Agent)({ keepAlive: true });
const get = () => new Promise((resolve, reject) => require('node:http')
  .get({ host: '127.0.0.1', port, path: '/', agent }, (r) => r.resume().on('end', resolve)).on('error', reject));
(async () => {
  const times = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const t0 = performance.now();
    await get();
    times.push(performance.now() - t0);
    await new Promise((resolve) => setTimeout(resolve, 1000 / rate));
  }
  times.sort((a, b) => a - b);
  const at = (q) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * q))] * 10) / 10;
  console.log(JSON.stringify({ p50_ms: at(0.5), p99_ms: at(0.99) }));
  agent.destroy();
})();`;

/**
 * A bare HTTP round trip between two processes of their own at `rate` a second for `seconds`: what the machine
 * itself costs a request at that pace, beside whatever else runs (no service code, no database).
 */
async function bareRoundTrips(rate: number, seconds: number): Promise<{ p50_ms: number; p99_ms: number }> {
  const server = spawn(process.execPath, ['-e', ECHO_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      server.once('error', reject);
    });
    return await new Promise((resolve, reject) =>
      execFile(process.execPath, ['-e', PINGER, String(port), String(rate), String(seconds)], (error, stdout) =>
        error ? reject(error) : resolve(JSON.parse(stdout) as { p50_ms: number; p99_ms: number }),
      ),
    );
  } finally {
    server.kill('SIGKILL');
  }
}

async function hotTeam(h: Harness) {
  const [[hot], [quiet], [steadyTeam]] = await Promise.all([
    createTeams(h.core, h.origin, h.receivers, 'fair-hot', 1, 1),
    createTeams(h.core, h.origin, h.receivers, 'fair-y', 1, 1),
    createTeams(h.core, h.origin, h.receivers, 'fair-z', 1, 1),
  ]);
  if (!hot || !quiet || !steadyTeam) throw new Error('no teams');
  await publishP99(h, quiet, 5); // warm
  const [alone, bareAlone] = await Promise.all([publishP99(h, quiet), bareRoundTrips(PROBE_RATE, SECONDS)]);
  const [steady, steadyLoad] = await Promise.all([
    publishP99(h, quiet, SECONDS, LEAD_MS),
    // Within a team's 4 admission slots (ADMISSION_SLOTS): a stall must not turn into 429s of its own.
    teamLoad(h, steadyTeam, { perTeam: 4, rate: STEADY_RATE, durationMs: SECONDS * 1000 + LEAD_MS }),
  ]);
  // Dead letters for the hot team's bulk replay: an endpoint (of a second tenant) answering 400 fails each delivery
  // at once; once they are there it points at a fast receiver and the replay sends them again.
  const deadTenant = await addTenant(h, hot, 'fair-hot-dead');
  const rejecting = await addEndpoint(h.origin, hot.authorization, deadTenant, h.receivers.url('reject', 'fair-hot-r'));
  for (let i = 0; i < DEAD_LETTERS; i += 10)
    await Promise.all(Array.from({ length: 10 }, () => publish(h, hot, deadTenant, { dead: true })));
  const deadline = Date.now() + 30_000;
  while ((h.receivers.counts.get('fair-hot-r') ?? 0) < DEAD_LETTERS && Date.now() < deadline) await sleep(100);
  await sleep(1000);
  const patched = await fetch(`${h.origin}/v1/endpoints/${rejecting.id}`, {
    method: 'PATCH',
    headers: { authorization: hot.authorization, 'content-type': 'application/json', 'if-match': rejecting.etag },
    body: JSON.stringify({ url: h.receivers.url('fast', 'fair-hot-replayed') }),
  });
  if (patched.status !== 200) throw new Error(`PATCH: ${patched.status} ${await patched.text()}`);
  const replay = fetch(`${h.origin}/v1/replays`, {
    method: 'POST',
    headers: {
      authorization: hot.authorization,
      'content-type': 'application/json',
      'idempotency-key': 'fair-hot-replay',
    },
    body: JSON.stringify({ endpoint_id: rejecting.id }),
  });
  const statementsBefore = await probeStats(h.server);
  const [beside, hotLoad, , bareBeside] = await Promise.all([
    publishP99(h, quiet, SECONDS, LEAD_MS),
    teamLoad(h, hot, { perTeam: 16, durationMs: SECONDS * 1000 + LEAD_MS }),
    replay.then(async (r) => {
      if (r.status !== 202) throw new Error(`replay: ${r.status} ${await r.text()}`);
    }),
    bareRoundTrips(PROBE_RATE, SECONDS),
  ]);
  const refused = Object.values(hotLoad.rejected).reduce((sum, n) => sum + n, 0);
  // The server's statements in the window, per request of team X (admitted or refused): where its share goes.
  const statementsAfter = await probeStats(h.server);
  const requests = hotLoad.admitted + refused;
  const perRequest = Object.entries(statementsAfter.statements)
    .map(([key, n]) => [key, (n - (statementsBefore.statements[key] ?? 0)) / Math.max(1, requests)] as const)
    .filter(([, n]) => n >= 0.01)
    .sort((a, b) => b[1] - a[1]);
  console.log(
    `  hot_team server statements per request of team X (${requests} requests):\n` +
      perRequest.map(([key, n]) => `    ${n.toFixed(3)}  ${key}`).join('\n'),
  );
  return {
    alone_publish_p50_ms: alone.request_p50_ms,
    alone_publish_p99_ms: alone.request_p99_ms,
    beside_publish_p50_ms: beside.request_p50_ms,
    beside_publish_p99_ms: beside.request_p99_ms,
    publish_p99_ratio: Math.round((beside.request_p99_ms / Math.max(1, alone.request_p99_ms)) * 100) / 100,
    hot_admitted_per_s: Math.round(hotLoad.admitted / (hotLoad.elapsed_ms / 1000)),
    hot_refused_per_s: Math.round(refused / (hotLoad.elapsed_ms / 1000)),
    replayed: h.receivers.counts.get('fair-hot-replayed') ?? 0,
    bare_round_trip_alone: bareAlone,
    bare_round_trip_beside: bareBeside,
    steady_publish_p50_ms: steady.request_p50_ms,
    steady_publish_p99_ms: steady.request_p99_ms,
    steady_admitted_per_s: Math.round(steadyLoad.admitted / (steadyLoad.elapsed_ms / 1000)),
    steady_refused: Object.values(steadyLoad.rejected).reduce((sum, n) => sum + n, 0),
    publish_p99_over_steady: Math.round((beside.request_p99_ms / Math.max(1, steady.request_p99_ms)) * 100) / 100,
    hot_client_cpu_ms_per_s: hotLoad.cpu_ms_per_s,
    steady_client_cpu_ms_per_s: steadyLoad.cpu_ms_per_s,
  };
}

export async function runFairnessBench(build: ServiceBuild): Promise<FairnessFigures> {
  const h = await startHarness(build, { durable: false, specLimits: true, label: 'fair-' });
  try {
    const [fast] = await createTeams(h.core, h.origin, h.receivers, 'fair-c', 1, 1);
    await probe(h, fast!); // warm: the fast endpoint is known fast before anything else runs
    const alone = await probe(h, fast!);
    console.log(`  fairness alone: p50 ${alone.p50_ms} ms, p99 ${alone.p99_ms} ms`);
    const figures: FairnessFigures = { limits: { service_concurrency: 6, max_concurrency: 3 }, alone };
    if (CASES.has('two_slow')) {
      figures.two_slow = await besideSlow(h, fast!, alone, 'fair-s2', 2, 2);
      console.log(`  fairness two_slow: ${JSON.stringify(figures.two_slow)}`);
    }
    if (CASES.has('six_slow')) {
      figures.six_slow = await besideSlow(h, fast!, alone, 'fair-s6', 3, 6);
      console.log(`  fairness six_slow: ${JSON.stringify(figures.six_slow)}`);
    }
    if (CASES.has('two_workers')) {
      await startExtraWorker(h, 'worker-2');
      await waitForPartitionOwners(h, 2);
      await probe(h, fast!); // the new owner of the fast endpoint learns its speed
      figures.two_workers = await besideSlow(h, fast!, alone, 'fair-w2', 2, 2);
      console.log(`  fairness two_workers: ${JSON.stringify(figures.two_workers)}`);
      await stopExtraWorkers(h);
    }
    if (CASES.has('hot_team')) {
      figures.hot_team = await hotTeam(h);
      console.log(`  fairness hot_team: ${JSON.stringify(figures.hot_team)}`);
    }
    return figures;
  } finally {
    await h.stop();
  }
}
