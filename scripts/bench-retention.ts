/**
 * The retention figure of `npm run bench` (issue 30; docs/retention.md, docs/benchmarks.md): what expiring one day
 * of stored traffic costs, by deleting its rows in batches (the sweep before migration 0041) and by dropping the
 * day's partitions (PartitionMaintenance.dropExpired), and what either does to delivery figure (a) while it runs.
 *
 * The delivery benchmark's deployment (built server and worker processes, loopback receivers, its own embedded
 * Postgres, scripts/bench-delivery-harness.ts) with 4 + 2 × BENCH_RETENTION_DROPS days (default 3 drops: 10 days;
 * BENCH_RETENTION_DAYS may store more) of BENCH_RETENTION_MESSAGES
 * messages each (default 100,000; each with its content, one delivery and one attempt: four rows) seeded with SQL
 * in the days before today, content already erased as it is after 30 days. Then, with no load:
 *
 *   delete  one day's rows deleted in batches of 200 (messages with their deliveries, attempts and contents, each
 *           batch its own transaction), then a VACUUM of the day's partitions (the dead rows it left)
 *   drop    one day's partitions dropped (messages, message_contents, deliveries, attempts)
 *
 * each as CPU seconds (every Postgres process and this one), WAL bytes (pg_current_wal_lsn before and after) and wall
 * time; and (a) (fan-out 1, closed loop, as scripts/bench-delivery.ts, BENCH_SECONDS each) in windows: alone, while
 * a day is deleted (the delete path, from the window's start to its end), alone, then BENCH_RETENTION_DROPS times a
 * window with a day dropped halfway through it followed by one alone; each window under retention is read against
 * the mean of the windows alone on either side of it, and the drops' figure pools them. Then (d) the same way: (a)
 * with a backlog of BENCH_BACKLOG pending deliveries (default 1,000,000) inserted with SQL as
 * scripts/bench-delivery.ts does, its CPU per message over (a)'s alone being figure (d).
 * The machine is shared: read the figures against each other, not as absolutes.
 */
import { DAY, ManualClock, PartitionMaintenance, seedDay, utcDay, type Services } from '@svc/core';
import {
  buildServices,
  createTeams,
  cpuSeconds,
  cpuDelta,
  postgresCpu,
  sleep,
  type BenchTeam,
} from './bench-delivery-env.js';
import {
  publishTeams,
  publishWindow,
  startHarness,
  warmUp,
  type Harness,
  type Window,
} from './bench-delivery-harness.js';
import { insertBacklog } from './bench-delivery-seed.js';

/** Drops measured under (a), and again under (d), each between two windows alone. */
const DROPS = Number(process.env['BENCH_RETENTION_DROPS'] ?? 3);
/**
 * The days stored: one dropped alone, DROPS under (a), DROPS under (d), then three deleted (alone, under (a), under
 * (d)); more are kept, as older traffic.
 */
const DAYS = Math.max(Number(process.env['BENCH_RETENTION_DAYS'] ?? 0), 1 + 2 * DROPS + 3);
const PER_DAY = Number(process.env['BENCH_RETENTION_MESSAGES'] ?? 100_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const BACKLOG = Number(process.env['BENCH_BACKLOG'] ?? 1_000_000);
const BACKLOG_SETUP_BUDGET_MS = 110_000;
const SEED_BATCH = 25_000;
const TEAMS = 24;
const BACKLOG_TEAMS = 10;

export interface Pace {
  admitted_per_s: number;
  delivered_per_s: number;
  cpu_ms_per_message: number;
}

export interface ExpiryCost {
  wall_s: number;
  cpu_s: number;
  wal_bytes: number;
}

export interface RetentionFigures {
  days: number;
  messages_per_day: number;
  rows_per_day: number;
  seed_s: number;
  delete: ExpiryCost & { rows_deleted: number; vacuum: ExpiryCost };
  drop: ExpiryCost & { partitions: number };
  /** drop / (delete + its vacuum) WAL bytes: target <= 0.01. */
  wal_ratio: number;
  /**
   * (a) admitted and delivered per second: alone (the mean of every window alone), while a day is deleted, while a
   * day is dropped (the mean of the drop windows).
   */
  a_without: Pace;
  a_during_delete: Pace & { days_deleted: number };
  a_during_drop: Pace;
  /**
   * Delivered per second during the drop windows over the windows alone on either side of each, pooled: target >=
   * 0.95; each drop's own in a_drop_ratios.
   */
  a_drop_ratio: number;
  a_drop_ratios?: number[];
  /** During the delete window over the windows alone on either side of it. */
  a_delete_ratio: number;
  /** (d): (a) with `backlog` pending deliveries, measured the same way. */
  d?: {
    backlog: number;
    backlog_setup_s: number;
    /** CPU ms per admitted message (server, worker, Postgres) of (a) alone, the base of the cost ratios. */
    a_cpu_ms_per_message: number;
    without: BacklogWindow;
    during_delete: BacklogWindow;
    during_drop: BacklogWindow;
    /** delivered per second during over the windows alone around, as for (a). */
    drop_ratio: number;
    drop_ratios?: number[];
    delete_ratio: number;
  };
}

/** One window of (d): its pace, its CPU per message and (d)'s figure, that CPU over (a)'s alone. */
export interface BacklogWindow {
  admitted_per_s: number;
  delivered_per_s: number;
  cpu_ms_per_message: number;
  cost_ratio: number;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

async function walLsn(services: Services): Promise<string> {
  return (await services.db.query(`SELECT pg_current_wal_lsn()::text AS lsn`))[0].lsn;
}

/** Wall time, CPU of Postgres and of this process, and WAL written, around `run`. */
async function cost(h: Harness, run: () => Promise<unknown>): Promise<ExpiryCost> {
  const db = h.core.services;
  const [lsn0, pg0, own0, t0] = [await walLsn(db), postgresCpu(h.postgresDir), cpuSeconds(process.pid), Date.now()];
  await run();
  const wall = (Date.now() - t0) / 1000;
  const cpu = cpuDelta(pg0, postgresCpu(h.postgresDir)) + cpuSeconds(process.pid) - own0;
  const lsn1 = await walLsn(db);
  const wal = (await db.db.query(`SELECT pg_wal_lsn_diff($1, $2)::float8 AS n`, [lsn1, lsn0]))[0].n;
  return { wall_s: round(wall, 3), cpu_s: round(cpu, 3), wal_bytes: Math.round(wal) };
}

/** Partition maintenance on a clock of its own (the day to expire lies in the past of the service's clock). */
const maintenanceAt = (services: Services, at: Date) => new PartitionMaintenance(services.db, new ManualClock(at));

/** A day's partitions, made for past days: the legacy partition of a new database covers them until dropped. */
async function makeDayPartitions(services: Services, days: Date[]): Promise<void> {
  const legacy = (await services.db.query(`SELECT count(*)::int AS n FROM messages_legacy`).catch(() => [{ n: -1 }]))[0]
    .n;
  if (legacy === 0) {
    for (const table of ['attempts', 'deliveries', 'message_contents', 'messages'])
      await services.db.query(`DROP TABLE ${table}_legacy`);
    await services.db.query(`UPDATE time_partitioned_tables SET legacy_bound = NULL`);
  } else if (legacy > 0) throw new Error('the benchmark needs a new database (its legacy partition is not empty)');
  for (const day of days) await maintenanceAt(services, day).makeAhead();
  await services.partitions.makeAhead(); // yesterday's and today's, which the legacy partition held
}

/**
 * Deletes one day's messages as the sweep did before 0041: batches of 200, each its own transaction; under load, only
 * until `stop` says so (the window has ended; the rest of the day stays, its cost is measured alone).
 */
async function deleteDay(services: Services, day: Date, stop: () => boolean = () => false): Promise<number> {
  const partition = `"messages_p${day.toISOString().slice(0, 10).replace(/-/g, '')}"`;
  const cutoff = new Date(day.getTime() + DAY);
  let deleted = 0;
  for (;;) {
    const n = await services.retention.deleteOldMessagesFrom(partition, cutoff, 200);
    deleted += n;
    if (n < 200 || stop()) return deleted;
  }
}

/** VACUUM of one day's four partitions. */
async function vacuumDay(services: Services, day: Date): Promise<void> {
  const d = day.toISOString().slice(0, 10).replace(/-/g, '');
  await services.db.query(`VACUUM messages_p${d}, message_contents_p${d}, deliveries_p${d}, attempts_p${d}`);
}

/** Drops one day's partitions: the maintenance run 30 days and a minute after the day ended. */
async function dropDay(services: Services, day: Date): Promise<number> {
  const report = await maintenanceAt(services, new Date(day.getTime() + 31 * DAY + 60_000)).dropExpired();
  return report.dropped.length;
}

/** CPU ms (server, worker, Postgres) per message admitted in a window. */
const cpuPerMessage = (window: Window) =>
  ((window.cpuMsPerS.server + window.cpuMsPerS.worker + window.cpuMsPerS.postgres) * SECONDS) /
  Math.max(1, window.load.admitted);

async function fanout1(h: Harness, teams: BenchTeam[]) {
  const which = (name: string) => name.startsWith('a-');
  const window = await publishWindow(h, { teams: publishTeams(teams), perTeam: 2, durationMs: SECONDS * 1000 }, which);
  return {
    admitted_per_s: round(window.load.admitted / (window.load.elapsed_ms / 1000)),
    delivered_per_s: round(window.deliveredPerS),
    cpu_ms_per_message: round(cpuPerMessage(window), 3),
  };
}

type Fanout1 = Awaited<ReturnType<typeof fanout1>>;

/**
 * (a) between windows alone: alone, while `deleteIt` is deleted row by row (started as the window opens, stopped as
 * it ends), alone, then for each of `dropThem` a window with that day dropped halfway through it, followed by one
 * alone. Each window under retention is read against the mean of the windows alone on either side of it: the machine
 * is shared and its load drifts, so a single pair of windows cannot tell a drop's 0.1 s from the drift.
 */
async function underRetention(h: Harness, teams: BenchTeam[], deleteIt: Date, dropThem: Date[]) {
  const { services } = h.core;
  const alone = [await fanout1(h, teams)];
  await sleep(2000);
  let deleting = true;
  const deleter = (async () => {
    await sleep(3000); // the window opens 3 s after the call
    if ((await deleteDay(services, deleteIt, () => !deleting)) === 0) throw new Error('nothing deleted under load');
  })();
  const duringDelete = await fanout1(h, teams);
  deleting = false;
  await deleter;
  // The dead rows it left, vacuumed now: autovacuum of them must not fall into the next window.
  await vacuumDay(services, deleteIt);
  await sleep(2000);
  alone.push(await fanout1(h, teams));
  const duringDrops: Fanout1[] = [];
  for (const day of dropThem) {
    await sleep(2000);
    const dropper = (async () => {
      await sleep(3000 + (SECONDS * 1000) / 2);
      if ((await dropDay(services, day)) === 0) throw new Error('the day under load was not dropped');
    })();
    duringDrops.push(await fanout1(h, teams));
    await dropper;
    await sleep(2000);
    alone.push(await fanout1(h, teams));
  }
  const mean = (windows: Fanout1[], pick: (f: Fanout1) => number) =>
    windows.reduce((sum, f) => sum + pick(f), 0) / windows.length;
  const meanPace = (windows: Fanout1[]): Fanout1 => ({
    admitted_per_s: round(mean(windows, (f) => f.admitted_per_s)),
    delivered_per_s: round(mean(windows, (f) => f.delivered_per_s)),
    cpu_ms_per_message: round(
      mean(windows, (f) => f.cpu_ms_per_message),
      3,
    ),
  });
  const neighbours = (i: number) => mean([alone[i]!, alone[i + 1]!], (f) => f.delivered_per_s);
  // Each drop against its neighbours; the figure pools them: delivered during every drop over delivered alone around.
  const dropRatios = duringDrops.map((f, i) => round(f.delivered_per_s / Math.max(1e-9, neighbours(i + 1)), 3));
  const dropRatio = round(
    duringDrops.reduce((sum, f) => sum + f.delivered_per_s, 0) /
      Math.max(
        1e-9,
        duringDrops.reduce((sum, _, i) => sum + neighbours(i + 1), 0),
      ),
    3,
  );
  return {
    without: meanPace(alone),
    duringDelete,
    deleteRatio: round(duringDelete.delivered_per_s / Math.max(1e-9, neighbours(0)), 3),
    duringDrop: meanPace(duringDrops),
    dropRatio,
    dropRatios,
  };
}

export async function runRetentionBench(): Promise<{ retention: RetentionFigures }> {
  console.log('retention: building the production JavaScript');
  const build = await buildServices();
  try {
    const h = await startHarness(build, { durable: false, label: 'retention-' });
    try {
      const { services } = h.core;
      // The oldest days first: days[0] is dropped alone, then DROPS days under (a) and DROPS under (d) (a drop takes
      // every partition up to its day, so these come first), then one deleted alone, one under (a), one under (d).
      if (DROPS < 1) throw new Error('BENCH_RETENTION_DROPS must be at least 1');
      const today = utcDay(new Date());
      const days = Array.from({ length: DAYS }, (_, i) => new Date(today.getTime() - (DAYS + 1 - i) * DAY));
      await makeDayPartitions(services, days);
      const teams = await createTeams(h.core, h.origin, h.receivers, 'a', TEAMS, 1);
      await warmUp(h, teams);
      const target = {
        teamId: teams[0]!.teamId,
        keyId: (await services.db.query(`SELECT id FROM api_keys WHERE team_id = $1 LIMIT 1`, [teams[0]!.teamId]))[0]
          .id,
        tenantId: teams[0]!.tenantId,
        endpointId: teams[0]!.endpoints[0]!.id,
      };
      console.log(`retention: seeding ${DAYS} days of ${PER_DAY.toLocaleString('en')} messages (4 rows each)`);
      const seedStarted = Date.now();
      for (const day of days)
        for (let done = 0; done < PER_DAY; done += SEED_BATCH)
          await seedDay(services.db, target, new Date(day.getTime() + (done / PER_DAY) * DAY), {
            messages: Math.min(SEED_BATCH, PER_DAY - done),
            erased: true,
            salt: String(done),
          });
      await services.db.query('VACUUM ANALYZE messages, message_contents, deliveries, attempts');
      const seedS = (Date.now() - seedStarted) / 1000;
      console.log(`retention: seeded in ${round(seedS)} s`);

      console.log('retention: expiring one day by dropping its partitions, and one by deleting its rows');
      let partitions = 0;
      const drop = await cost(h, async () => (partitions = await dropDay(services, days[0]!)));
      let rowsDeleted = 0;
      const [deleteAlone, deleteUnderA, deleteUnderD] = days.slice(1 + 2 * DROPS) as [Date, Date, Date];
      const deleted = await cost(h, async () => (rowsDeleted = await deleteDay(services, deleteAlone)));
      const vacuum = await cost(h, () => vacuumDay(services, deleteAlone));

      console.log(
        `retention: (a) alone, while a day is deleted, alone, then ${DROPS} times while a day is dropped and alone`,
      );
      const a = await underRetention(h, teams, deleteUnderA, days.slice(1, 1 + DROPS));
      const backlogTeams = await createTeams(h.core, h.origin, h.receivers, 'backlog', BACKLOG_TEAMS, 10);
      console.log(`retention: (d) inserting a backlog of ${BACKLOG.toLocaleString('en')} pending deliveries`);
      const backlog = await insertBacklog(h.databaseUrl, backlogTeams, BACKLOG, BACKLOG_SETUP_BUDGET_MS);
      console.log(`retention: (d) with ${backlog.inserted.toLocaleString('en')} pending, alone, deleting, dropping`);
      const d = await underRetention(h, teams, deleteUnderD, days.slice(1 + DROPS, 1 + 2 * DROPS));
      const backlogWindow = (f: Fanout1): BacklogWindow => ({
        ...f,
        cost_ratio: round(f.cpu_ms_per_message / Math.max(1e-9, a.without.cpu_ms_per_message), 3),
      });
      const retention: RetentionFigures = {
        days: DAYS,
        messages_per_day: PER_DAY,
        rows_per_day: PER_DAY * 4,
        seed_s: round(seedS),
        delete: { ...deleted, rows_deleted: rowsDeleted * 4, vacuum },
        drop: { ...drop, partitions },
        wal_ratio: round(drop.wal_bytes / Math.max(1, deleted.wal_bytes + vacuum.wal_bytes), 5),
        a_without: a.without,
        a_during_delete: { ...a.duringDelete, days_deleted: 1 },
        a_during_drop: a.duringDrop,
        a_drop_ratio: a.dropRatio,
        a_drop_ratios: a.dropRatios,
        a_delete_ratio: a.deleteRatio,
        d: {
          backlog: backlog.inserted,
          backlog_setup_s: round(backlog.seconds),
          a_cpu_ms_per_message: a.without.cpu_ms_per_message,
          without: backlogWindow(d.without),
          during_delete: backlogWindow(d.duringDelete),
          during_drop: backlogWindow(d.duringDrop),
          drop_ratio: d.dropRatio,
          drop_ratios: d.dropRatios,
          delete_ratio: d.deleteRatio,
        },
      };
      return { retention };
    } finally {
      await h.stop();
    }
  } finally {
    build.remove();
  }
}

export function printRetention(r: RetentionFigures): void {
  console.log(
    `\nretention: expiring one day of ${r.messages_per_day.toLocaleString('en')} messages ` +
      `(${r.rows_per_day.toLocaleString('en')} rows), ${r.days} days stored`,
  );
  const line = (name: string, c: ExpiryCost) =>
    console.log(
      `  ${name.padEnd(28)} wall ${c.wall_s.toFixed(3).padStart(8)} s  CPU ${c.cpu_s.toFixed(3).padStart(8)} s  ` +
        `WAL ${(c.wal_bytes / 1e6).toFixed(3).padStart(10)} MB`,
    );
  line('delete rows (batches of 200)', r.delete);
  line('  its VACUUM', r.delete.vacuum);
  line(`drop ${r.drop.partitions} partitions`, r.drop);
  console.log(`  WAL drop / delete: ${r.wal_ratio} (target <= 0.01)`);
  console.log(
    `  (a) delivered/s: alone ${r.a_without.delivered_per_s}, while deleting ${r.a_during_delete.delivered_per_s} ` +
      `(${r.a_delete_ratio}), while dropping ${r.a_during_drop.delivered_per_s} (${r.a_drop_ratio}, target >= 0.95; ` +
      `each drop ${(r.a_drop_ratios ?? []).join(', ')})`,
  );
  const d = r.d;
  if (!d) return; // a .tmp/bench.json written before (d) was measured here
  const cost = (w: BacklogWindow) =>
    `${w.delivered_per_s}/s, ${w.cpu_ms_per_message} ms CPU/message (d ${w.cost_ratio})`;
  console.log(
    `  (d) with ${d.backlog.toLocaleString('en')} pending, delivered/s and CPU per message over (a) alone's ` +
      `${d.a_cpu_ms_per_message} ms:\n    alone ${cost(d.without)}\n    while deleting ${cost(d.during_delete)} ` +
      `(pace ${d.delete_ratio})\n    while dropping ${cost(d.during_drop)} (pace ${d.drop_ratio}; each drop ` +
      `${(d.drop_ratios ?? []).join(', ')})`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { retention } = await runRetentionBench();
  printRetention(retention);
}
