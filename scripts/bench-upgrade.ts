/**
 * The upgrade figure of `npm run bench` (issue 30; docs/scaling.md, "Partitioning by time"): migration 0041, which
 * partitions messages, message_contents, deliveries and attempts by day, run on a database filled with a few million
 * rows while the service delivers.
 *
 * The delivery benchmark's deployment (built server and worker processes, loopback receivers, its own embedded
 * Postgres, scripts/bench-delivery-harness.ts) on a database migrated up to the last migration before 0041. The processes
 * stand for the old version of a rolling upgrade, still serving while a new process applies the migrations at its
 * start: they are this build (which runs on either schema), and since every process applies the migrations it has not
 * seen when it starts, 0041 and the later ones are recorded as applied while they start and unrecorded again just
 * before this benchmark applies them (with the migration runner every process uses, packages/db). Stored traffic
 * is seeded with SQL (seedDay: each message with its content, one delivery and one attempt, four rows) over
 * BENCH_UPGRADE_DAYS days (default 10) before today, in batches of 25,000 messages until BENCH_UPGRADE_ROWS rows
 * (default 8,000,000) or BENCH_UPGRADE_SEED_S seconds of seeding (default 150), whichever comes first. Then a steady
 * probe (200 messages/s offered from the load process, fan-out 1, every accepted message's accept-to-receiver time
 * recorded) runs for BENCH_SECONDS (default 10) before the migration starts, and on while 0041 and every later migration
 * run, for BENCH_UPGRADE_PROBE_S seconds in all after the start (default 90). A watcher samples pg_locks every 10 ms
 * for the longest lock wait of any backend (and of any backend but the migration's own). The probe's messages are
 * split by their acceptance time into before and during the migration.
 */
import pg from 'pg';
import { seedDay, utcDay, DAY } from '@svc/core';
import { loadMigrations, runMigrations } from '@svc/db';
import { buildServices, createTeams, sleep, type BenchTeam } from './bench-delivery-env.js';
import { drain, publishTeams, publishWindow, startHarness, warmUp, type Harness } from './bench-delivery-harness.js';

const ROWS = Number(process.env['BENCH_UPGRADE_ROWS'] ?? 8_000_000);
const SEED_BUDGET_MS = Number(process.env['BENCH_UPGRADE_SEED_S'] ?? 150) * 1000;
const DAYS = Number(process.env['BENCH_UPGRADE_DAYS'] ?? 10);
const LEAD_S = Number(process.env['BENCH_SECONDS'] ?? 10);
const PROBE_S = Number(process.env['BENCH_UPGRADE_PROBE_S'] ?? 90);
const RATE = 200;
const SEED_BATCH = 25_000;
const TEAMS = 24;
/** The migration runner's connection, told apart from the service's in pg_stat_activity. */
const MIGRATION_APP = 'bench-upgrade-migration';

/** Accept-to-receiver times of the probe's messages accepted in one span of time. */
export interface ProbeSpan {
  messages: number;
  per_s: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  undelivered: number;
}

export interface UpgradeFigures {
  rows: number;
  messages: number;
  days: number;
  seed_s: number;
  /** The migrations applied while the service ran (0041 and every later one). */
  applied: string[];
  migration_s: number;
  /** Longest wait for a lock of any backend while the migration ran (ms), and of any but the migration's own. */
  longest_lock_wait_ms: number;
  longest_service_lock_wait_ms: number;
  /** The statement behind the longest wait of the service (its first 100 characters). */
  longest_service_wait_statement: string;
  probe_rate_per_s: number;
  before: ProbeSpan;
  during: ProbeSpan;
  /** Publishes answered other than 202 (or not answered) over the whole probe: must be 0. */
  refused: number;
  refused_by_status: Record<string, number>;
  /** The probe ran on after the migration ended (otherwise `during` covers only its start). */
  probe_covered_migration: boolean;
  request_p50_ms: number;
  request_p99_ms: number;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

/** Seeds stored traffic over `DAYS` days before today until ROWS rows or the time budget; answers the messages. */
async function seed(h: Harness, team: BenchTeam): Promise<number> {
  const { services } = h.core;
  const target = {
    teamId: team.teamId,
    keyId: (await services.db.query(`SELECT id FROM api_keys WHERE team_id = $1 LIMIT 1`, [team.teamId]))[0].id,
    tenantId: team.tenantId,
    endpointId: team.endpoints[0]!.id,
  };
  const today = utcDay(new Date());
  const started = Date.now();
  let messages = 0;
  for (let batch = 0; messages * 4 < ROWS && Date.now() - started < SEED_BUDGET_MS; batch += 1) {
    // Round robin over the days, each batch spread over its whole day (the salt keeps the IDs apart).
    const day = new Date(today.getTime() - (1 + (batch % DAYS)) * DAY);
    const count = Math.min(SEED_BATCH, Math.ceil(ROWS / 4) - messages);
    await seedDay(services.db, target, day, { messages: count, salt: `u${batch}` });
    messages += count;
  }
  return messages;
}

/** Samples pg_locks every 10 ms until stopped: the longest wait of any backend, and of any but the migration's. */
function watchLocks(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  const seen = { all: 0, service: 0, statement: '' };
  let watching = true;
  const done = (async () => {
    await client.connect();
    try {
      while (watching) {
        const { rows } = await client.query<{ ms: number; app: string; query: string }>(
          `SELECT extract(epoch FROM clock_timestamp() - l.waitstart)::float8 * 1000 AS ms, a.application_name AS app,
                  a.query
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE NOT l.granted AND l.waitstart IS NOT NULL AND a.pid <> pg_backend_pid()`,
        );
        for (const row of rows) {
          seen.all = Math.max(seen.all, row.ms);
          if (row.app !== MIGRATION_APP && row.ms > seen.service) {
            seen.service = row.ms;
            seen.statement = row.query.replace(/\s+/g, ' ').trim().slice(0, 100);
          }
        }
        await sleep(10);
      }
    } finally {
      await client.end();
    }
  })();
  return {
    stop: async () => {
      watching = false;
      await done;
      return seen;
    },
  };
}

function span(accepted: [string, number][], arrivals: Map<string, number>, from: number, to: number): ProbeSpan {
  const mine = accepted.filter(([, at]) => at >= from && at < to);
  let undelivered = 0;
  const latencies = mine.map(([id, at]) => {
    const arrived = arrivals.get(id);
    if (arrived === undefined) undelivered += 1;
    return arrived === undefined ? Infinity : arrived - at;
  });
  latencies.sort((a, b) => a - b);
  const finite = latencies.filter(Number.isFinite);
  return {
    messages: mine.length,
    per_s: round(mine.length / Math.max(1e-3, (to - from) / 1000)),
    p50_ms: percentile(finite, 0.5),
    p99_ms: percentile(finite, 0.99),
    max_ms: finite.at(-1) ?? 0,
    undelivered,
  };
}

export async function runUpgradeBench(): Promise<{ upgrade: UpgradeFigures }> {
  console.log('upgrade: building the production JavaScript');
  const build = await buildServices();
  try {
    const migrations = loadMigrations();
    const later = migrations.filter((m) => m.id >= '0041').map((m) => m.id);
    const record = (sql: string) => async (url: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(sql, [later]);
      } finally {
        await client.end();
      }
    };
    const h = await startHarness(build, {
      durable: false,
      label: 'upgrade-',
      migrations: migrations.filter((m) => m.id < '0041'),
      beforeServices: record(`INSERT INTO schema_migrations (id) SELECT unnest($1::text[])`),
    });
    try {
      const teams = await createTeams(h.core, h.origin, h.receivers, 'a', TEAMS, 1);
      await warmUp(h, teams);
      console.log(
        `upgrade: seeding up to ${ROWS.toLocaleString('en')} rows over ${DAYS} days (at most ${SEED_BUDGET_MS / 1000} s)`,
      );
      const seedStarted = Date.now();
      const messages = await seed(h, teams[0]!);
      const seedS = (Date.now() - seedStarted) / 1000;
      await h.core.services.db.query('VACUUM ANALYZE messages, message_contents, deliveries, attempts');
      console.log(`upgrade: seeded ${(messages * 4).toLocaleString('en')} rows in ${round(seedS)} s`);

      const which = (name: string) => name.startsWith('a-');
      const arrivedBefore = h.receivers.total(which);
      const locks = watchLocks(h.databaseUrl);
      h.receivers.arrivals.clear();
      h.receivers.recording = true;
      const probeStarted = Date.now() + 3000; // publishWindow starts its load 3 s after the call
      const probe = publishWindow(
        h,
        {
          teams: publishTeams(teams),
          perTeam: 4,
          rate: RATE,
          durationMs: (LEAD_S + PROBE_S) * 1000,
          recordAccepted: true,
        },
        which,
      );
      await sleep(probeStarted + LEAD_S * 1000 - Date.now());
      console.log('upgrade: migrating (0041 and later) under the probe');
      const migrationUrl = new URL(h.databaseUrl);
      migrationUrl.searchParams.set('application_name', MIGRATION_APP);
      await record(`DELETE FROM schema_migrations WHERE id = ANY($1::text[])`)(h.databaseUrl);
      const migrationStarted = Date.now();
      const applied = await runMigrations(migrationUrl.toString());
      const migrationEnded = Date.now();
      console.log(`upgrade: migrated in ${round((migrationEnded - migrationStarted) / 1000, 2)} s`);
      const window = await probe;
      const waits = await locks.stop();
      const accepted = window.load.accepted ?? [];
      await drain(h, which, arrivedBefore + accepted.length, 60);
      h.receivers.recording = false;

      const kinds: { relkind: string }[] = await h.core.services.db.query(
        `SELECT relkind FROM pg_class
          WHERE relname IN ('messages', 'message_contents', 'deliveries', 'attempts') AND relkind = 'p'`,
      );
      if (!applied.includes('0041_time_partitions') || kinds.length !== 4)
        throw new Error(`upgrade: 0041 did not partition the tables (applied ${applied.join(', ')})`);
      const [stored]: { n: number }[] = await h.core.services.db.query(`SELECT count(*)::int AS n FROM messages`);
      if (stored!.n < messages + accepted.length)
        throw new Error(`upgrade: ${stored!.n} messages stored, fewer than ${messages} seeded + ${accepted.length}`);

      const refused = Object.values(window.load.rejected).reduce((a, b) => a + b, 0);
      const upgrade: UpgradeFigures = {
        rows: messages * 4,
        messages,
        days: DAYS,
        seed_s: round(seedS),
        applied,
        migration_s: round((migrationEnded - migrationStarted) / 1000, 2),
        longest_lock_wait_ms: Math.round(waits.all),
        longest_service_lock_wait_ms: Math.round(waits.service),
        longest_service_wait_statement: waits.statement,
        probe_rate_per_s: RATE,
        before: span(accepted, h.receivers.arrivals, probeStarted, migrationStarted),
        during: span(accepted, h.receivers.arrivals, migrationStarted, migrationEnded),
        refused,
        refused_by_status: window.load.rejected,
        probe_covered_migration: probeStarted + (LEAD_S + PROBE_S) * 1000 >= migrationEnded,
        request_p50_ms: window.load.request_p50_ms,
        request_p99_ms: window.load.request_p99_ms,
      };
      if (!upgrade.probe_covered_migration)
        console.warn(`upgrade: the migration outlasted the probe; raise BENCH_UPGRADE_PROBE_S`);
      return { upgrade };
    } finally {
      await h.stop();
    }
  } finally {
    build.remove();
  }
}

export function printUpgrade(u: UpgradeFigures): void {
  console.log(
    `\nupgrade to daily partitions (${u.applied.join(', ')}) on ${u.rows.toLocaleString('en')} rows ` +
      `(${u.messages.toLocaleString('en')} messages over ${u.days} days, seeded in ${u.seed_s} s), the service delivering`,
  );
  console.log(
    `  migration ${u.migration_s} s; longest lock wait ${u.longest_lock_wait_ms} ms (any backend), ` +
      `${u.longest_service_lock_wait_ms} ms (the service${u.longest_service_wait_statement ? `: ${u.longest_service_wait_statement}` : ''})`,
  );
  const line = (name: string, s: ProbeSpan) =>
    console.log(
      `  ${name.padEnd(18)} ${String(s.messages).padStart(6)} accepted (${s.per_s}/s)  accept-to-receiver p50 ` +
        `${s.p50_ms} ms  p99 ${s.p99_ms} ms  max ${s.max_ms} ms  undelivered ${s.undelivered}`,
    );
  console.log(`  probe at ${u.probe_rate_per_s} messages/s (fan-out 1):`);
  line('before migration', u.before);
  line('during migration', u.during);
  console.log(
    `  refused or failed publishes: ${u.refused} (must be 0)${u.refused ? ` ${JSON.stringify(u.refused_by_status)}` : ''}; ` +
      `request p50 ${u.request_p50_ms} ms, p99 ${u.request_p99_ms} ms over the whole probe` +
      (u.probe_covered_migration ? '' : '; THE MIGRATION OUTLASTED THE PROBE'),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { upgrade } = await runUpgradeBench();
  printUpgrade(upgrade);
}
