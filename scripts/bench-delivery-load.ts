/**
 * The load process of the delivery benchmark (scripts/bench-delivery.ts), apart from the processes under test so
 * they do not share a thread with their client. Reads a JSON job from argv[2] and prints one JSON result:
 *
 *   publish   POST /v1/messages with a unique Idempotency-Key, per team at most `perTeam` requests in flight;
 *             closed loop (as fast as answers come) or open loop at `rate` messages per second in all
 *   posts     the HTTP ceiling: raw undici POSTs to a receiver (measurePostsPerSecond)
 *   commits   the Postgres ceiling: single-row INSERT commits with a pool of `poolSize` connections
 *
 * Every job starts at the wall-clock time `startAt`, so the caller can read its counters at the same moments.
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
const SLOW_LOG = process.env['BENCH_SLOW_LOG'];
const SLOW_MS = Number(process.env['BENCH_SLOW_MS'] ?? 40);
import pg from 'pg';
import { Agent } from 'undici';
import { measurePostsPerSecond } from '@svc/egress';

export interface PublishTeam {
  authorization: string;
  tenantId: string;
  eventType: string;
}

export interface PublishJob {
  kind: 'publish';
  /** The server's origin, e.g. http://127.0.0.1:8080. */
  origin: string;
  teams: PublishTeam[];
  perTeam: number;
  /** Open loop: messages per second offered in all, spread evenly over the teams. Closed loop when absent. */
  rate?: number;
  startAt: number;
  durationMs: number;
  /** Answer the accepted messages' IDs and created_at (for accept-to-receiver latency). */
  recordAccepted?: boolean;
  payloadBytes?: number;
}

export interface PublishResult {
  admitted: number;
  elapsed_ms: number;
  /** Answers other than 202, by status. */
  rejected: Record<string, number>;
  first_error: string | null;
  /** Sends that started more than 50 ms after their open-loop slot (the server could not keep up). */
  late: number;
  request_p50_ms: number;
  request_p99_ms: number;
  /** This load process's own CPU (user + system) per second of its window: the client's share of the machine. */
  cpu_ms_per_s: number;
  accepted?: [string, number][];
}

export interface PostsJob {
  kind: 'posts';
  url: string;
  concurrency: number;
  seconds: number;
  startAt: number;
}

export interface CommitsJob {
  kind: 'commits';
  databaseUrl: string;
  poolSize: number;
  seconds: number;
  startAt: number;
}

export type LoadJob = PublishJob | PostsJob | CommitsJob;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

async function publish(job: PublishJob): Promise<PublishResult> {
  const origin = new URL(job.origin);
  const agent = new Agent({ connections: job.teams.length * job.perTeam, pipelining: 1 });
  const padding = 'x'.repeat(Math.max(0, (job.payloadBytes ?? 256) - 120));
  const rejected: Record<string, number> = {};
  const accepted: [string, number][] = [];
  const latencies: number[] = [];
  let firstError: string | null = null;
  let admitted = 0;
  let late = 0;
  // Every connection opened and the client's request path run once before the window (GET /healthz, unmeasured):
  // a new process's first requests otherwise pay the TCP connect and undici's first, unoptimised run. Y's first two
  // requests in hot_team took 60 to 110 ms that way, alone setting its p99 of 200.
  await Promise.all(
    Array.from({ length: job.teams.length * job.perTeam }, async () => {
      const response = await agent.request({ origin, path: '/healthz', method: 'GET' });
      await response.body.dump();
    }),
  );
  await sleep(job.startAt - Date.now());
  const started = Date.now();
  const cpuAtStart = process.cpuUsage();
  const deadline = started + job.durationMs;
  const perTeamInterval = job.rate ? (1000 * job.teams.length) / job.rate : 0;

  const teamLoop = async (team: PublishTeam, teamIndex: number) => {
    let next = 0;
    // Open loop: team i's n-th message is due at started + offset + n * interval; the offsets spread the teams.
    const offset = (perTeamInterval * teamIndex) / job.teams.length;
    const slot = async () => {
      for (;;) {
        const n = next;
        next += 1;
        if (perTeamInterval > 0) {
          const due = started + offset + n * perTeamInterval;
          if (due >= deadline) return;
          const wait = due - Date.now();
          if (wait > 0) await sleep(wait);
          else if (wait < -50) late += 1;
        } else if (Date.now() >= deadline) return;
        const sentAt = Date.now();
        const body = `{"tenant_id":"${team.tenantId}","event_type":"${team.eventType}","payload":{"seq":${n},"sent_at":${sentAt},"pad":"${padding}"}}`;
        const t0 = performance.now();
        try {
          const response = await agent.request({
            origin,
            path: '/v1/messages',
            method: 'POST',
            headers: {
              authorization: team.authorization,
              'content-type': 'application/json',
              'idempotency-key': `bench-${process.pid}-${teamIndex}-${n}`,
            },
            body,
          });
          const text = await response.body.text();
          latencies.push(performance.now() - t0);
          if (SLOW_LOG && performance.now() - t0 > SLOW_MS)
            appendFileSync(
              SLOW_LOG,
              `${new Date(sentAt).toISOString()} ${(performance.now() - t0).toFixed(1)} ms ${response.statusCode} pid ${process.pid}\n`,
            );
          if (response.statusCode === 202) {
            admitted += 1;
            if (job.recordAccepted) {
              const view = JSON.parse(text) as { id: string; created_at: string };
              accepted.push([view.id, Date.parse(view.created_at)]);
            }
          } else {
            rejected[response.statusCode] = (rejected[response.statusCode] ?? 0) + 1;
            firstError ??= `${response.statusCode} ${text.slice(0, 300)}`;
            // Closed loop: a 429 (rate or admission slots) backs off briefly rather than spin.
            if (perTeamInterval === 0) await sleep(response.statusCode === 429 ? 50 : 10);
          }
        } catch (error) {
          rejected['network'] = (rejected['network'] ?? 0) + 1;
          firstError ??= String(error);
          await sleep(10);
        }
      }
    };
    await Promise.all(Array.from({ length: job.perTeam }, slot));
  };
  await Promise.all(job.teams.map(teamLoop));
  const elapsed = Date.now() - started;
  const cpu = process.cpuUsage(cpuAtStart);
  await agent.close();
  latencies.sort((a, b) => a - b);
  return {
    admitted,
    elapsed_ms: elapsed,
    rejected,
    first_error: firstError,
    late,
    request_p50_ms: Math.round(percentile(latencies, 0.5) * 10) / 10,
    request_p99_ms: Math.round(percentile(latencies, 0.99) * 10) / 10,
    cpu_ms_per_s: Math.round((cpu.user + cpu.system) / elapsed),
    ...(job.recordAccepted ? { accepted } : {}),
  };
}

async function commits(job: CommitsJob): Promise<{ commits_per_s: number }> {
  const pool = new pg.Pool({ connectionString: job.databaseUrl, max: job.poolSize });
  const table = `bench_commits_${process.pid}`;
  await pool.query(`CREATE TABLE ${table} (id bigint PRIMARY KEY, body text)`);
  await sleep(job.startAt - Date.now());
  let done = 0;
  const started = Date.now();
  const deadline = started + job.seconds * 1000;
  await Promise.all(
    Array.from({ length: job.poolSize }, async (_, worker) => {
      for (let i = 0; Date.now() < deadline; i += 1) {
        await pool.query(`INSERT INTO ${table} VALUES ($1, $2)`, [worker * 100_000_000 + i, 'x']);
        done += 1;
      }
    }),
  );
  const rate = done / ((Date.now() - started) / 1000);
  await pool.query(`DROP TABLE ${table}`);
  await pool.end();
  return { commits_per_s: rate };
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '{}') as LoadJob;
  let result: unknown;
  if (job.kind === 'publish') result = await publish(job);
  else if (job.kind === 'commits') result = await commits(job);
  else {
    await sleep(job.startAt - Date.now());
    const posts = await measurePostsPerSecond({ url: job.url, seconds: job.seconds, concurrency: job.concurrency });
    result = { posts_per_s: posts.postsPerSecond, p50_ms: posts.p50Ms, p99_ms: posts.p99Ms, failed: posts.failed };
  }
  console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
