/**
 * The analytics benchmark of `npm run bench` (docs/benchmarks.md, docs/analytics.md). It starts its own Postgres and
 * the server in this process, fills 30 days of hourly rollups for a busy team (every hour of the team, its 20
 * tenants, 200 endpoints and 10 sources, beside 100 other teams) and measures:
 *
 *   read    GET /v1/analytics over 30 days, hour buckets, team and endpoint scope, and day buckets: latency of
 *           requests one after another  vs  a bare node:http server answering the same bytes
 *   rollup  facts folded into the rollups per second (the job's cost)  vs  the same facts inserted per second
 *           (what the hot paths pay to append them)
 */
import http from 'node:http';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { AnalyticsQuery, DAY, HOUR, limitsWith, openCore, parseInput, systemClock, testCoreOptions } from '@svc/core';
import { buildApp, readServerConfig } from '@svc/server';
import { createBenchEndpoint, startBenchDatabase } from './bench-setup.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const TENANTS = 20;
const ENDPOINTS_PER_TENANT = 10;
const SOURCES = 10;
const OTHER_TEAMS = 100;
const FACTS = 200_000;

export interface AnalyticsFigures {
  rollup_rows: number;
  read: {
    team_hour: Latency;
    endpoint_hour: Latency;
    team_day: Latency;
    /** The service call of team_hour without HTTP (Postgres, buckets). */
    service: Latency;
    /** The same bytes as team_hour from a bare node:http server. */
    ceiling: Latency;
    /** ceiling p50 / team_hour p50: 1 would be as fast as serving the bytes from memory. */
    ratio: number;
    response_bytes: number;
  };
  rollup: { facts_per_s: number; insert_ceiling_per_s: number; ratio: number; facts: number };
}

interface Latency {
  p50_ms: number;
  p99_ms: number;
  requests: number;
}

/** Latency of `work` run one call after another for BENCH_SECONDS (after a warm-up). */
async function timed(work: () => Promise<unknown>): Promise<Latency> {
  const times: number[] = [];
  for (let i = 0; i < 20; i += 1) await work();
  const deadline = Date.now() + SECONDS * 1000;
  while (Date.now() < deadline || times.length < 50) {
    const started = process.hrtime.bigint();
    await work();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Number(times[Math.min(times.length - 1, Math.floor(times.length * q))]!.toFixed(2));
  return { p50_ms: at(0.5), p99_ms: at(0.99), requests: times.length };
}

function latency(url: string, headers: Record<string, string>): Promise<Latency> {
  return timed(async () => {
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  });
}

export async function runAnalyticsBench(): Promise<{ analytics: AnalyticsFigures }> {
  const { databaseUrl, stop } = await startBenchDatabase('analytics');
  try {
    const core = await openCore(testCoreOptions(databaseUrl, systemClock, { poolSize: 10, limits: limitsWith({}) }));
    const { services } = core;
    const config = { ...readServerConfig({ PORT: '0', LOG_LEVEL: 'silent' }, 'local'), limits: services.limits };
    // The read bucket would cap the figure at the configured rate; the benchmark measures the request itself.
    services.rateLimits.take = async () => undefined;
    const { app } = await buildApp(services, config, pino({ level: 'silent' }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const team = await services.teams.createTeam('busy');
    const { secret } = await services.teams.createKey(team.id);
    const headers = { authorization: `Bearer ${secret}` };

    // One tenant and endpoint exist (GET checks the filter's owner); the rollups of the other scopes stand for
    // the rest of the busy team's tenants, endpoints and sources.
    const ctx = { actor: { teamId: team.id, keyId: 'key_bench' } };
    const { tenantId, endpointId } = await createBenchEndpoint(services, ctx);
    const now = new Date();
    const to = new Date(Math.floor(now.getTime() / HOUR) * HOUR);
    const from = new Date(to.getTime() - 30 * DAY);
    const db = services.db;
    const scopes: [string, string][] = [
      ['team', team.id],
      ['tenant', tenantId],
      ['endpoint', endpointId],
    ];
    for (let t = 2; t <= TENANTS; t += 1) scopes.push(['tenant', 'wdt_bench' + String(t).padStart(22, '0')]);
    for (let e = 2; e <= TENANTS * ENDPOINTS_PER_TENANT; e += 1)
      scopes.push(['endpoint', 'wde_bench' + String(e).padStart(22, '0')]);
    for (let s = 1; s <= SOURCES; s += 1) scopes.push(['source', 'wds_bench' + String(s).padStart(22, '0')]);
    for (let o = 1; o <= OTHER_TEAMS; o += 1) scopes.push(['team', `team_other${o}`]);
    await fillRollups(db, team.id, scopes, from, to);
    await db.query('VACUUM ANALYZE analytics_hourly');
    const counted = (await db.query('SELECT count(*)::int AS n FROM analytics_hourly')) as { n: number }[];
    const rollupRows = counted[0]!.n;

    const window = `created_after=${from.toISOString()}&created_before=${to.toISOString()}`;
    const teamUrl = `${address}/v1/analytics?${window}`;
    const sample = Buffer.from(await (await fetch(teamUrl, { headers })).arrayBuffer());
    const parsed = JSON.parse(sample.toString('utf8')) as { data: unknown[] };
    if (parsed.data.length !== 720) throw new Error(`expected 720 hourly buckets, got ${parsed.data.length}`);
    const teamHour = await latency(teamUrl, headers);
    const endpointHour = await latency(`${teamUrl}&endpoint_id=${endpointId}`, headers);
    const teamDay = await latency(`${teamUrl}&bucket=day`, headers);
    const query = parseInput(AnalyticsQuery, { created_after: from.toISOString(), created_before: to.toISOString() });
    const service = await timed(() => services.analytics.getAnalytics(ctx, query));
    const bare = http.createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(sample),
    );
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const ceiling = await latency(`http://127.0.0.1:${(bare.address() as { port: number }).port}/`, {});
    bare.close();

    const rollup = await measureRollup(services, team.id, now);
    await app.close();
    await core.close();
    return {
      analytics: {
        rollup_rows: rollupRows,
        read: {
          team_hour: teamHour,
          endpoint_hour: endpointHour,
          team_day: teamDay,
          service,
          ceiling,
          ratio: Number((ceiling.p50_ms / teamHour.p50_ms).toFixed(3)),
          response_bytes: sample.length,
        },
        rollup,
      },
    };
  } finally {
    await stop();
  }
}

/**
 * Every hour of the window for every scope, with counts like a busy hour's, inserted hour by hour as the rollup
 * writes them (so one scope's 720 rows sit on as many pages, as they would).
 */
async function fillRollups(
  db: DataSource,
  teamId: string,
  scopes: [string, string][],
  from: Date,
  to: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO analytics_hourly (scope, scope_id, hour, team_id, admitted_messages, ingest_bytes, deliveries,
                                   attempts, succeeded, failed, expired, canceled, duplicates, rejected_auth,
                                   throttled, queue_depth, oldest_due_age_seconds)
     SELECT s.scope, s.scope_id, h, CASE WHEN s.scope_id LIKE 'team_other%' THEN s.scope_id ELSE $1 END,
            3600, 3600 * 900, 7200, 7600, 7100, 50, 10, 40, 12, 3, 7, 120, 4
       FROM generate_series($4::timestamptz, $5::timestamptz - interval '1 hour', interval '1 hour') AS h
      CROSS JOIN unnest($2::text[], $3::text[]) AS s(scope, scope_id)
      ORDER BY h, s.scope, s.scope_id`,
    [teamId, scopes.map(([scope]) => scope), scopes.map(([, id]) => id), from, to],
  );
}

/**
 * Facts as the hot paths append them (admissions with a fan-out of 3, attempts, finished deliveries) for the
 * busy team over the last hour: inserted in one statement (the ceiling: what appending them costs), then folded
 * by the rollup.
 */
async function measureRollup(
  services: Awaited<ReturnType<typeof openCore>>['services'],
  teamId: string,
  now: Date,
): Promise<AnalyticsFigures['rollup']> {
  const insertStarted = process.hrtime.bigint();
  await services.db.query(
    `INSERT INTO analytics_facts (team_id, tenant_id, endpoint_id, message_id, fanout, at, admitted, ingest_bytes,
                                  deliveries, attempts, succeeded)
     SELECT $1, 'wdt_bench' || lpad((1 + i % 20)::text, 22, '0'),
            CASE WHEN i % 3 = 0 THEN NULL ELSE 'wde_bench' || lpad((1 + i % 200)::text, 22, '0') END,
            'wdm_missing' || i,
            CASE WHEN i % 3 = 0 THEN ARRAY['wde_bench' || lpad((1 + i % 200)::text, 22, '0'),
                                           'wde_bench' || lpad((1 + (i + 1) % 200)::text, 22, '0'),
                                           'wde_bench' || lpad((1 + (i + 2) % 200)::text, 22, '0')] END,
            $2::timestamptz - make_interval(secs => i % 3600),
            CASE WHEN i % 3 = 0 THEN 1 END, CASE WHEN i % 3 = 0 THEN 900 END, CASE WHEN i % 3 = 0 THEN 3 END,
            CASE WHEN i % 3 = 1 THEN 1 END, CASE WHEN i % 3 = 2 THEN 1 END
       FROM generate_series(1, $3) i`,
    [teamId, now, FACTS],
  );
  const insertSeconds = Number(process.hrtime.bigint() - insertStarted) / 1e9;
  const foldStarted = process.hrtime.bigint();
  const report = await services.analytics.rollUp();
  const foldSeconds = Number(process.hrtime.bigint() - foldStarted) / 1e9;
  if (report.facts !== FACTS) throw new Error(`folded ${report.facts} facts of ${FACTS}`);
  const factsPerSecond = Math.round(FACTS / foldSeconds);
  const insertPerSecond = Math.round(FACTS / insertSeconds);
  return {
    facts_per_s: factsPerSecond,
    insert_ceiling_per_s: insertPerSecond,
    ratio: Number((factsPerSecond / insertPerSecond).toFixed(3)),
    facts: FACTS,
  };
}
