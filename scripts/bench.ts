/**
 * `npm run bench`: throughput and speed figures as ratios against ceilings measured in the same run on the
 * same machine, so the numbers say something about the code rather than about the machine.
 *
 *   json.parse      parseStrict + minify of a 1 MiB webhook payload   vs  JSON.parse of the same text
 *   rest.create     POST /v1/tenants from 16 teams at once (auth, idempotency, one transaction)  vs  raw single-row
 *                   INSERT commits on the same Postgres
 *   rest.read       GET /v1/tenants/{id}  vs  a bare node:http server answering the same bytes
 *   receive         POST /v1/receive/{token}: captures by one busy source (verify, rate bucket, deduplicate, admit
 *                   with fan-out 1, charge its billing key; one transaction), 4 at once (a team's admission slots)
 *                   vs  raw single-row INSERT commits, 4 at once
 *
 *   delivery        messages through the server and worker processes to loopback receivers (scripts/bench-delivery.ts)
 *                   vs  raw commits and raw undici POSTs measured in the same run
 *   fairness        at the spec's default limits: a tenant's accept-to-receiver p99 beside slow receivers of other
 *                   teams, with one and two workers, and a team's publish p99 beside a hot team
 *                   (scripts/bench-fairness.ts)  vs  the same tenant's figures alone, in the same run
 *   analytics       GET /v1/analytics over 30 days of a busy team's hourly rollups, and the rollup's folding rate
 *                   (scripts/bench-analytics.ts)  vs  the same bytes from a bare node:http server, and appending the
 *                   same facts
 *   tracing         server CPU per admitted message with tracing on (SDK, in-process exporter) and the span API's
 *                   no-op calls of one message (scripts/bench-tracing.ts)  vs  the CPU per message with tracing off
 *   start           `npm start` to `Ready.`: a first start (console build, new data directory) and a later one
 *                   (scripts/bench-start.ts)  vs  Postgres' own first and later start
 *   retention       expiring one day of N days of stored traffic by dropping its partitions  vs  by deleting its rows
 *                   (the sweep before migration 0041): CPU, WAL bytes, wall time; and delivery (a) while either runs
 *                   vs  alone (scripts/bench-retention.ts)
 *   stream          deliveries per second through one stream connection with batched acknowledgements
 *                   (scripts/bench-stream.ts)  vs  the same run's push figure (same max_concurrency) and raw POSTs
 *   upgrade         migration 0041 (daily partitions) on a database of a few million rows at 0040 while the service
 *                   delivers: wall time, longest lock wait, a 200/s probe's accept-to-receiver p50/p99 and refusals
 *                   during the migration  vs  before it (scripts/bench-upgrade.ts)
 *
 * HTTP load comes from a second process (scripts/bench-load.ts), the same for subject and ceiling.
 * Prints a table and writes .tmp/bench.json. BENCH_SECONDS shortens each measurement; BENCH_ONLY=delivery runs only
 * the delivery part (keeping the other figures already in .tmp/bench.json), BENCH_ONLY=analytics only the analytics
 * part, BENCH_ONLY=tracing only the tracing part, BENCH_ONLY=start only the start times, BENCH_ONLY=retention only the
 * retention part, BENCH_ONLY=stream only the stream figure, BENCH_ONLY=upgrade only the upgrade, BENCH_ONLY=core only
 * the others. BENCH_SCENARIOS picks delivery scenarios (scripts/bench-delivery.ts); the delivery figures of the others
 * stay as they are in .tmp/bench.json.
 * docs/benchmarks.md describes every figure.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { minify, parseStrict } from '@svc/json';
import { ADMISSION_SLOTS, openCore, systemClock, testCoreOptions, limitsWith } from '@svc/core';
import { countRoundTrips, ensureDatabase, runMigrations, startEmbeddedPostgres } from '@svc/db';
import { buildApp, readServerConfig } from '@svc/server';
import { runAnalyticsBench, type AnalyticsFigures } from './bench-analytics.js';
import { runDeliveryBench, type DeliveryFigures } from './bench-delivery.js';
import { buildServices } from './bench-delivery-env.js';
import { runFairnessBench, type FairnessFigures } from './bench-fairness.js';
import { printRetention, runRetentionBench, type RetentionFigures } from './bench-retention.js';
import { printStart, runStartBench, type StartFigures } from './bench-start.js';
import { printStream, runStreamBench, type StreamFigures } from './bench-stream.js';
import { printUpgrade, runUpgradeBench, type UpgradeFigures } from './bench-upgrade.js';
import { printTracing, runTracingBench, type TracingFigures } from './bench-tracing.js';
import { ROOT } from './local-runtime.js';

const DURATION_MS = Number(process.env['BENCH_SECONDS'] ?? 5) * 1000;
const CONCURRENCY = 16;

interface Figure {
  name: string;
  value: number;
  ceiling: number;
  unit: string;
  /** value / ceiling for rates (higher is better); ceiling / value for times. */
  ratio: number;
}

function payload(bytes: number): string {
  const items: unknown[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i += 1) {
    const item = {
      id: `evt_${i}`,
      type: 'invoice.paid',
      amount: 1999.5 + i,
      customer: { email: `u${i}@example.com`, tags: ['a', 'b'] },
      paid: true,
      note: null,
    };
    items.push(item);
    size += JSON.stringify(item).length + 1;
  }
  return JSON.stringify({ data: items }, null, 1);
}

function timePerRun(work: () => void): number {
  for (let i = 0; i < 5; i += 1) work();
  const runs: number[] = [];
  const deadline = Date.now() + 2000;
  while (Date.now() < deadline || runs.length < 10) {
    const started = process.hrtime.bigint();
    work();
    runs.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)]!;
}

async function rate(task: (i: number) => Promise<void>, concurrency = CONCURRENCY): Promise<number> {
  let done = 0;
  const deadline = Date.now() + DURATION_MS;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; Date.now() < deadline; i += 1) {
        await task(worker * 1_000_000 + i);
        done += 1;
      }
    }),
  );
  return done / ((Date.now() - started) / 1000);
}

/** Runs scripts/bench-load.ts in its own process and returns the request rate it measured. */
function remoteRate(job: Record<string, unknown>): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'scripts/bench-load.ts'),
        JSON.stringify({ concurrency: CONCURRENCY, durationMs: DURATION_MS, ...job }),
      ],
      { cwd: ROOT, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(stderr || error.message)) : resolve((JSON.parse(stdout) as { rate: number }).rate),
    );
  });
}

/** Postgres round trips of one GET, PATCH and create through the REST pipeline (the server runs in this process). */
async function pipelineRoundTrips(
  address: string,
  headers: Record<string, string>,
): Promise<{ get: number; patch: number; create: number }> {
  const counter = countRoundTrips();
  const measure = async (url: string, init: RequestInit, status: number): Promise<number> => {
    counter.reset();
    const response = await fetch(url, init);
    if (response.status !== status)
      throw new Error(`${init.method} ${url}: ${response.status} ${await response.text()}`);
    return counter.count;
  };
  const created = await fetch(`${address}/v1/tenants`, {
    method: 'POST',
    headers: { ...headers, 'idempotency-key': 'rt-0' },
    body: '{"external_id":"rt-0","name":"RT"}',
  });
  const id = ((await created.json()) as { id: string }).id;
  const url = `${address}/v1/tenants/${id}`;
  await fetch(url, { headers });
  const get = await measure(url, { method: 'GET', headers }, 200);
  const etag = (await fetch(url, { headers })).headers.get('etag')!;
  const patch = await measure(
    url,
    { method: 'PATCH', headers: { ...headers, 'if-match': etag }, body: '{"name":"Renamed"}' },
    200,
  );
  const create = await measure(
    `${address}/v1/tenants`,
    { method: 'POST', headers: { ...headers, 'idempotency-key': 'rt-1' }, body: '{"external_id":"rt-1","name":"RT"}' },
    201,
  );
  return { get, patch, create };
}

type RoundTrips = { get: number; patch: number; create: number };

/**
 * Captures per second into one bearer source (no signature over the body, so each request of the load process
 * can carry a body of its own: every capture is new, none a duplicate) of a tenant with one endpoint, from as many
 * senders at once as a team may admit messages (ADMISSION_SLOTS; more get 429 and retry). No worker runs: the
 * deliveries wait in the queue.
 */
async function receiveRate(core: Awaited<ReturnType<typeof openCore>>, address: string): Promise<number> {
  const team = await core.services.teams.createTeam('bench-receive');
  await core.services.teams.setPaymentCard(team.id, true);
  const { secret } = await core.services.teams.createKey(team.id);
  const teamHeaders = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const create = async (path: string, body: unknown): Promise<Record<string, string>> => {
    const response = await fetch(`${address}/v1${path}`, {
      method: 'POST',
      headers: { ...teamHeaders, 'idempotency-key': `bench-receive${path}` },
      body: JSON.stringify(body),
    });
    if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, string>;
  };
  const tenant = await create('/tenants', { external_id: 'receive', name: 'Receive' });
  await create('/event_types', { name: 'bench.captured' });
  await create('/endpoints', { tenant_id: tenant['id'], url: 'https://example.com/captured' });
  const source = await create('/sources', {
    tenant_id: tenant['id'],
    name: 'Busy provider',
    verification: { kind: 'bearer' },
    event_type: 'bench.captured',
  });
  return remoteRate({
    url: `${address}${new URL(source['receive_url']!).pathname}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${source['secret']}` },
    bodyTemplate: '{"type":"bench.captured","n":"{i}","data":{"amount":1999,"currency":"eur"}}',
    expectStatus: 200,
    concurrency: ADMISSION_SLOTS,
  });
}

/** The figures before the delivery benchmark: JSON parsing and the REST pipeline. */
async function runCoreBench(): Promise<{ figures: Figure[]; roundTrips: RoundTrips | null }> {
  const figures: Figure[] = [];
  let roundTrips: RoundTrips | null = null;

  const text = payload(1024 * 1024);
  const ours = timePerRun(() => minify(text, parseStrict(text)));
  const ceiling = timePerRun(() => JSON.parse(text));
  figures.push({
    name: 'json.parse (1 MiB, ms per document)',
    value: ours,
    ceiling,
    unit: 'ms',
    ratio: ceiling / ours,
  });

  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-pg-'));
  const cluster = await startEmbeddedPostgres({ dataDir, persistent: false });
  const databaseUrl = cluster.url.replace(/\/postgres$/, '/bench');
  try {
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    const core = await openCore(
      testCoreOptions(databaseUrl, systemClock, {
        poolSize: 20,
        limits: limitsWith({
          max_tenants: 10_000_000,
          // The receive figure keeps its rate bucket (one write per capture) but not the 50/s cap.
          source_requests_per_second: 1_000_000,
          max_pending_deliveries: 1_000_000_000,
          max_content_bytes: 1_000_000_000_000,
        }),
      }),
    );
    const config = { ...readServerConfig({ PORT: '0', LOG_LEVEL: 'silent' }, 'local'), limits: core.services.limits };
    // Rate limits would cap the figure at the configured rate; the benchmark measures the pipeline itself.
    const take = core.services.rateLimits.take.bind(core.services.rateLimits);
    core.services.rateLimits.take = async () => undefined;
    const { app } = await buildApp(core.services, config, pino({ level: 'silent' }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const team = await core.services.teams.createTeam('bench');
    const { secret } = await core.services.teams.createKey(team.id);
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };

    // Config writes are limited per team (20/s), so the figure that matters is many teams writing at once:
    // each worker writes as its own team.
    const workerKeys: string[] = [];
    for (let w = 0; w < CONCURRENCY; w += 1) {
      const workerTeam = await core.services.teams.createTeam(`bench-${w}`);
      workerKeys.push((await core.services.teams.createKey(workerTeam.id)).secret);
    }
    const creates = await remoteRate({
      url: `${address}/v1/tenants`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'bench-{i}' },
      uniqueHeaders: ['idempotency-key'],
      workerAuthorizations: workerKeys.map((key) => `Bearer ${key}`),
      bodyTemplate: '{"external_id":"t-{i}","name":"Bench"}',
      expectStatus: 201,
    });
    const pool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
    await pool.query('CREATE TABLE bench_commits (id bigint PRIMARY KEY, body text)');
    const commit = async (i: number) => {
      await pool.query('INSERT INTO bench_commits VALUES ($1, $2)', [i, 'x']);
    };
    const commits = await rate(commit);
    // One team admits at most ADMISSION_SLOTS messages at once: the receive figure's ceiling has as many in flight.
    await pool.query('TRUNCATE bench_commits');
    const commitsAtSlots = await rate(commit, ADMISSION_SLOTS);
    await pool.end();
    figures.push({
      name: 'rest.create (POST /tenants per second)',
      value: creates,
      ceiling: commits,
      unit: 'req/s',
      ratio: creates / commits,
    });

    roundTrips = await pipelineRoundTrips(address, headers);

    const tenant = await core.services.tenants.createTenant(
      { actor: { teamId: team.id, keyId: 'key_bench' } },
      { external_id: 'read-me', name: 'Read', metadata: {} },
    );
    const sample = await (await fetch(`${address}/v1/tenants/${tenant.id}`, { headers })).text();
    const reads = await remoteRate({
      url: `${address}/v1/tenants/${tenant.id}`,
      method: 'GET',
      headers,
      expectStatus: 200,
    });
    const bare = http.createServer((_request, response) => response.end(sample));
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const bareAddress = bare.address() as { port: number };
    const bareReads = await remoteRate({
      url: `http://127.0.0.1:${bareAddress.port}/`,
      method: 'GET',
      headers: {},
      expectStatus: 200,
    });
    bare.close();
    figures.push({
      name: 'rest.read (GET /tenants/{id} per second)',
      value: reads,
      ceiling: bareReads,
      unit: 'req/s',
      ratio: reads / bareReads,
    });

    core.services.rateLimits.take = take;
    const captures = await receiveRate(core, address);
    figures.push({
      name: 'receive (captures per second, one source)',
      value: captures,
      ceiling: commitsAtSlots,
      unit: 'req/s',
      ratio: captures / commitsAtSlots,
    });

    await app.close();
    await core.close();
  } finally {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { figures, roundTrips };
}

async function main(): Promise<void> {
  const only = process.env['BENCH_ONLY'];
  const parts = ['delivery', 'fairness', 'analytics', 'tracing', 'start', 'retention', 'stream', 'upgrade', 'core'];
  if (only && !parts.includes(only)) throw new Error(`BENCH_ONLY is ${parts.join(', ')}`);
  const runs = (part: string) => !only || only === part;
  const file = path.join(ROOT, '.tmp/bench.json');
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  const core = runs('core')
    ? await runCoreBench()
    : {
        figures: (previous['figures'] ?? []) as Figure[],
        roundTrips: (previous['round_trips'] ?? null) as RoundTrips | null,
      };
  const previousDelivery = (previous['delivery'] ?? null) as Partial<DeliveryFigures> | null;
  const delivery = runs('delivery') ? (await runDeliveryBench(previousDelivery ?? {})).delivery : previousDelivery;
  const fairness = runs('fairness') ? await runFairness() : ((previous['fairness'] ?? null) as FairnessFigures | null);
  const analytics = runs('analytics')
    ? (await runAnalyticsBench()).analytics
    : ((previous['analytics'] ?? null) as AnalyticsFigures | null);
  const tracing = runs('tracing')
    ? (await runTracingBench()).tracing
    : ((previous['tracing'] ?? null) as TracingFigures | null);
  const start = runs('start') ? (await runStartBench()).start : ((previous['start'] ?? null) as StartFigures | null);
  const retention = runs('retention')
    ? (await runRetentionBench()).retention
    : ((previous['retention'] ?? null) as RetentionFigures | null);
  const stream = runs('stream')
    ? (await runStreamBench()).stream
    : ((previous['stream'] ?? null) as StreamFigures | null);
  const upgrade = runs('upgrade')
    ? (await runUpgradeBench()).upgrade
    : ((previous['upgrade'] ?? null) as UpgradeFigures | null);
  const { figures, roundTrips } = core;

  if (only)
    console.log(`\n(BENCH_ONLY=${only}: the figures of the other parts come from the previous run in .tmp/bench.json)`);
  const scenarios = process.env['BENCH_SCENARIOS'];
  if (scenarios && runs('delivery'))
    console.log(
      `(BENCH_SCENARIOS=${scenarios}: the other delivery figures come from the previous run in .tmp/bench.json)`,
    );
  console.log('\nfigure                                      value        ceiling      ratio');
  for (const f of figures)
    console.log(
      `${f.name.padEnd(44)}${f.value.toFixed(1).padStart(9)} ${f.unit.padEnd(5)}${f.ceiling.toFixed(1).padStart(9)} ${f.unit.padEnd(5)}${f.ratio.toFixed(3).padStart(7)}`,
    );
  if (roundTrips)
    console.log(
      `\nPostgres round trips per request: GET ${roundTrips.get}, PATCH ${roundTrips.patch}, create ${roundTrips.create}`,
    );
  if (fairness) printFairness(fairness);
  if (analytics) printAnalytics(analytics);
  if (tracing) printTracing(tracing);
  if (start) printStart(start);
  if (retention) printRetention(retention);
  if (stream) printStream(stream);
  if (upgrade) printUpgrade(upgrade);
  mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        concurrency: CONCURRENCY,
        figures,
        round_trips: roundTrips,
        delivery,
        fairness,
        analytics,
        tracing,
        start,
        retention,
        stream,
        upgrade,
      },
      null,
      2,
    ),
  );
  console.log('\nJSON: .tmp/bench.json');
}

async function runFairness(): Promise<FairnessFigures> {
  const build = await buildServices();
  try {
    return await runFairnessBench(build);
  } finally {
    build.remove();
  }
}

/** Fairness at the spec's limits: each case's p99 over the same run's `alone` (targets in docs/benchmarks.md). */
function printFairness(f: FairnessFigures): void {
  const { alone } = f;
  console.log(
    `\nfairness at service_concurrency ${f.limits.service_concurrency}, max_concurrency ${f.limits.max_concurrency} ` +
      `(p99 over alone, target <= 2.0; alone p50 ${alone.p50_ms} ms, p99 ${alone.p99_ms} ms)`,
  );
  for (const [name, c] of [
    ['two_slow', f.two_slow],
    ['six_slow', f.six_slow],
    ['two_workers', f.two_workers],
  ] as const)
    if (c)
      console.log(
        `  ${name.padEnd(12)} p99 ${String(c.p99_ms).padStart(6)} ms  ratio ${c.p99_ratio.toFixed(2)}  ` +
          `undelivered ${c.undelivered}  peak in flight ${c.peak_in_flight} (limit 6)`,
      );
  const h = f.hot_team;
  if (h)
    console.log(
      `  hot_team     publish p50 / p99 ${h.beside_publish_p50_ms} / ${h.beside_publish_p99_ms} ms beside team X ` +
        `(${h.hot_admitted_per_s}/s admitted, ${h.hot_refused_per_s}/s refused, a replay of ${h.replayed}) over ` +
        `${h.alone_publish_p50_ms} / ${h.alone_publish_p99_ms} ms alone: ratio ${h.publish_p99_ratio.toFixed(2)} ` +
        `(target <= 1.5); the machine's bare round trip at that pace, p50 / p99: ${h.bare_round_trip_alone.p50_ms} / ` +
        `${h.bare_round_trip_alone.p99_ms} ms alone, ${h.bare_round_trip_beside.p50_ms} / ` +
        `${h.bare_round_trip_beside.p99_ms} ms beside; beside team Z publishing steadily within its limits ` +
        `(${h.steady_admitted_per_s}/s admitted, ${h.steady_refused} refused) ${h.steady_publish_p50_ms} / ${h.steady_publish_p99_ms} ms: ` +
        `beside X over beside Z ${h.publish_p99_over_steady.toFixed(2)}; the load processes' own CPU, ms a second: ` +
        `X's ${h.hot_client_cpu_ms_per_s}, Z's ${h.steady_client_cpu_ms_per_s}`,
    );
}

function printAnalytics(a: AnalyticsFigures): void {
  const { read, rollup } = a;
  const line = (name: string, l: { p50_ms: number; p99_ms: number }) =>
    console.log(
      `${name.padEnd(44)}${l.p50_ms.toFixed(2).padStart(9)} ms p50 ${l.p99_ms.toFixed(2).padStart(9)} ms p99`,
    );
  console.log(`\nanalytics (${a.rollup_rows} hourly rollups; ${read.response_bytes} bytes for 30 days by hour)`);
  line('GET /analytics, team, 720 hours', read.team_hour);
  line('GET /analytics, endpoint, 720 hours', read.endpoint_hour);
  line('GET /analytics, team, 30 days', read.team_day);
  line('the service call of the first, no HTTP', read.service);
  line('ceiling: the same bytes from node:http', read.ceiling);
  console.log(`${'ratio (ceiling p50 / team hours p50)'.padEnd(44)}${read.ratio.toFixed(3).padStart(9)}`);
  console.log(
    `${'rollup: facts folded/s vs appended/s'.padEnd(44)}${String(rollup.facts_per_s).padStart(9)} ${String(rollup.insert_ceiling_per_s).padStart(9)} ${rollup.ratio.toFixed(3).padStart(7)}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
