/**
 * Admission alone (docs/admission.md): POST /v1/messages against the production server (the built JavaScript the
 * delivery benchmark runs), with no worker running, from the load process of the delivery benchmark. Run it with `npx tsx scripts/bench-admission.ts`
 * (BENCH_SECONDS per scenario, default 10; BENCH_PAYLOAD_BYTES per message body, default 256). Two scenarios over fan-out-1 teams set up like the delivery benchmark's
 * (a) (each team: one tenant, the event type, one endpoint; 100 messages/s and 4 stored at once):
 *
 *   sequential   1 team, 1 request in flight: every admission is a batch of its own
 *   concurrent   24 teams, 2 requests in flight per team (48 in all), closed loop: admissions coalesce into batches
 *
 * For each: messages admitted per second, the server's Postgres round trips per admitted message (BEGIN and COMMIT
 * included) by statement, and CPU ms per message of the server and of Postgres (postmaster and children). The
 * ceiling is single-row INSERT commits per second through 10 connections on the same cluster, measured first.
 * Writes .tmp/bench-admission.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openCore, systemClock, testCoreOptions } from '@svc/core';
import { ensureDatabase, runMigrations, startEmbeddedPostgres } from '@svc/db';
import type { PublishResult } from './bench-delivery-load.js';
import {
  buildServices,
  cpuDelta,
  cpuSeconds,
  createTeams,
  freePort,
  postgresCpu,
  probeProfile,
  probeStats,
  Receivers,
  loadStartAt,
  runLoad,
  startService,
  statementDelta,
  stopService,
  waitFor,
  type BenchTeam,
  type ServiceBuild,
  type ServiceProcess,
} from './bench-delivery-env.js';
import { formatSummary, summariseProfile, type CpuProfile } from './bench-profile.js';
import { ROOT } from './local-runtime.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
/** BENCH_PAYLOAD_BYTES: each message's body size (256 by default; large bodies show what copying them costs). */
const PAYLOAD_BYTES = Number(process.env['BENCH_PAYLOAD_BYTES'] ?? 256);
/** BENCH_PROFILE=1: a CPU profile of the server during the concurrent scenario, summarised. */
const PROFILE = process.env['BENCH_PROFILE'] === '1';

interface Scenario {
  admitted_per_s: number;
  rejected: Record<string, number>;
  request_p50_ms: number;
  request_p99_ms: number;
  round_trips_per_message: number;
  statements_per_message: [string, number][];
  cpu_ms_per_message: { server: number; postgres: number };
}

async function measure(
  origin: string,
  server: ServiceProcess,
  postgresDir: string,
  teams: BenchTeam[],
  perTeam: number,
): Promise<Scenario> {
  const stats0 = await probeStats(server);
  const cpu0 = { server: cpuSeconds(server.child.pid!), postgres: postgresCpu(postgresDir) };
  const load = await runLoad<PublishResult>({
    kind: 'publish',
    origin,
    teams: teams.map((t) => ({ authorization: t.authorization, tenantId: t.tenantId, eventType: t.eventType })),
    perTeam,
    payloadBytes: PAYLOAD_BYTES,
    startAt: loadStartAt(),
    durationMs: SECONDS * 1000,
  });
  const stats1 = await probeStats(server);
  const messages = Math.max(1, load.admitted);
  const per = (seconds: number) => round((seconds * 1000) / messages);
  return {
    admitted_per_s: round(load.admitted / (load.elapsed_ms / 1000)),
    rejected: load.rejected,
    request_p50_ms: load.request_p50_ms,
    request_p99_ms: load.request_p99_ms,
    round_trips_per_message: round((stats1.round_trips - stats0.round_trips) / messages),
    statements_per_message: statementDelta(stats0, stats1).map(([statement, n]) => [statement, round(n / messages)]),
    cpu_ms_per_message: {
      server: per(cpuSeconds(server.child.pid!) - cpu0.server),
      postgres: per(cpuDelta(cpu0.postgres, postgresCpu(postgresDir))),
    },
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function print(name: string, s: Scenario): void {
  console.log(`\n${name}: ${s.admitted_per_s} admitted/s, p50 ${s.request_p50_ms} ms, p99 ${s.request_p99_ms} ms`);
  if (Object.keys(s.rejected).length > 0) console.log(`  rejected: ${JSON.stringify(s.rejected)}`);
  console.log(`  round trips per message: ${s.round_trips_per_message}`);
  for (const [statement, n] of s.statements_per_message) console.log(`    ${n.toFixed(2).padStart(6)}  ${statement}`);
  console.log(`  CPU ms per message: server ${s.cpu_ms_per_message.server}, Postgres ${s.cpu_ms_per_message.postgres}`);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-admission-pg-'));
  const cluster = await startEmbeddedPostgres({ dataDir, persistent: false });
  const databaseUrl = cluster.url.replace(/\/postgres$/, '/bench_admission');
  const receivers = new Receivers();
  let server: ServiceProcess | null = null;
  let services: ServiceBuild | null = null;
  let close: (() => Promise<void>) | null = null;
  try {
    services = await buildServices();
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    await receivers.start();
    const port = await freePort();
    const sealingKey = randomBytes(32);
    server = startService(
      'server',
      services.server,
      services.probe,
      {
        DATABASE_URL: databaseUrl,
        SVC_ENCRYPTION_KEY: sealingKey.toString('base64'),
        SVC_PUBLIC_BASE_URL: 'http://webhooks.bench.test',
        SVC_ALLOW_LOOPBACK_RECEIVERS: '1',
        LOG_LEVEL: 'warn',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      await freePort(),
    );
    const origin = `http://127.0.0.1:${port}`;
    await waitFor('server', async () => (await fetch(`${origin}/readyz`)).ok, server);
    const core = await openCore(testCoreOptions(databaseUrl, systemClock, { sealingKey, poolSize: 4 }));
    close = () => core.close();
    const ceiling = await runLoad<{ commits_per_s: number }>({
      kind: 'commits',
      databaseUrl,
      poolSize: 10,
      seconds: Math.min(SECONDS, 5),
      startAt: Date.now(),
    });
    const teams = await createTeams(core, origin, receivers, 'a', 24, 1);
    // Sequential first: the concurrent scenario leaves tens of thousands of rows for autovacuum to work through.
    const sequential = await measure(origin, server, cluster.dataDir, teams.slice(0, 1), 1);
    if (PROFILE) await probeProfile(server, 'start');
    const concurrent = await measure(origin, server, cluster.dataDir, teams, 2);
    if (PROFILE) {
      const profile = (await probeProfile(server, 'stop')) as CpuProfile;
      mkdirSync(path.join(ROOT, '.tmp/bench-profile'), { recursive: true });
      writeFileSync(path.join(ROOT, '.tmp/bench-profile/server-admission.cpuprofile'), JSON.stringify(profile));
      console.log(formatSummary('server (concurrent admissions)', summariseProfile(profile, 25)));
    }
    console.log(`ceiling: ${Math.round(ceiling.commits_per_s)} single-row commits/s (10 connections)`);
    print('concurrent (24 teams x 2 in flight)', concurrent);
    print('sequential (1 in flight)', sequential);
    mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    writeFileSync(
      path.join(ROOT, '.tmp/bench-admission.json'),
      JSON.stringify(
        { seconds: SECONDS, ceiling_commits_per_s: Math.round(ceiling.commits_per_s), concurrent, sequential },
        null,
        2,
      ),
    );
  } finally {
    if (server) await stopService(server);
    services?.remove();
    if (close) await close();
    await receivers.stop();
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
