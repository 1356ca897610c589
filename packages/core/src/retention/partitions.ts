import type { DataSource, EntityManager } from 'typeorm';
import { DAY, type Clock } from '../common/clock.js';
import { RECORD_RETENTION_DAYS } from './retention.service.js';

/** Daily partitions made ahead of the clock by every maintenance run (and at the worker's start). */
export const PARTITION_DAYS_AHEAD = 7;

/** What one maintenance run did. */
export interface PartitionReport {
  /** Partitions made, as `table_pYYYYMMDD`. */
  created: string[];
  /** Rows moved out of a DEFAULT partition into a partition made for their day. */
  movedFromDefault: number;
  /** Partitions dropped, past the longest retention of every row in them. */
  dropped: string[];
  /** Later deliveries (replays, a message accepted just before midnight) deleted with a dropped messages partition. */
  strayDeliveriesDeleted: number;
  /** Partitioned parents analysed (once a day each: autovacuum never analyses a partitioned parent). */
  analyzed: string[];
}

interface PartitionedTable {
  table_name: string;
  key_column: string;
  id_prefix: string;
  legacy_bound: string | null;
  /** The storage fillfactor of its partitions (deliveries leave room for the settlement's HOT update); null: default. */
  fillfactor: number | null;
}

/** One partition of a partitioned table: its name and the upper bound of its IDs (NULL for DEFAULT). */
interface Partition {
  name: string;
  upper: string | null;
}

/** How often a partitioned parent's statistics are gathered again. */
export const ANALYZE_PARENTS_EVERY_MS = DAY;

const PENDING = `status IN ('queued', 'in_flight', 'retry_wait')`;

/**
 * How long a maintenance statement that changes a parent's partitions waits for its lock. Dropping a partition takes
 * ACCESS EXCLUSIVE on the parent (attaching one, SHARE UPDATE EXCLUSIVE), and while it waits every new statement on
 * that table queues behind it: admission, claims and settlements would stall for as long as the wait. So the wait is
 * short, and a try that times out is rolled back and made again a little later, up to LOCK_TRIES times in one run
 * (then the next run tries again). It is also far below deadlock_timeout (1 s): if a transaction of the engine holds
 * one parent and wants another the drop holds, the drop is the one that gives way, never an admission.
 */
const LOCK_WAIT_MS = 50;
const LOCK_TRIES = 20;
const LOCK_PAUSE_MS = 250;

/**
 * Partition maintenance for the tables migration 0041 partitioned by day on their time-sortable IDs (docs/scaling.md,
 * docs/retention.md): makes the partitions of the next PARTITION_DAYS_AHEAD days (an insert beyond them lands in the
 * DEFAULT partition, so none ever fails; the run that makes its day moves it out), and drops a day's partitions once
 * every row in them is past its longest retention.
 */
export class PartitionMaintenance {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  async run(): Promise<PartitionReport> {
    const report = emptyReport();
    await this.makeAhead(report);
    await this.dropExpired(report);
    await this.analyzeParents(report);
    return report;
  }

  /**
   * Gathers the statistics of each partitioned parent not analysed in the last day (docs/retention.md,
   * "Statistics"). Autovacuum analyses the partitions as they change, never their parent, so the planner had no
   * estimate for a table as a whole. ANALYZE of a parent samples rows across its partitions (and analyses each of
   * them too); it takes SHARE UPDATE EXCLUSIVE, which reads and writes never wait for, and runs after this run's
   * drops, outside any transaction of ours.
   */
  async analyzeParents(report: PartitionReport = emptyReport()): Promise<PartitionReport> {
    const due: { table_name: string }[] = await this.db.query(
      `SELECT table_name FROM time_partitioned_tables
        WHERE swapped AND (analyzed_at IS NULL OR analyzed_at <= $1) ORDER BY table_name`,
      [new Date(this.clock.now().getTime() - ANALYZE_PARENTS_EVERY_MS)],
    );
    for (const { table_name: table } of due) {
      await this.db.query(`ANALYZE ${quote(table)}`);
      await this.db.query(`UPDATE time_partitioned_tables SET analyzed_at = $2 WHERE table_name = $1`, [
        table,
        this.clock.now(),
      ]);
      report.analyzed.push(table);
    }
    return report;
  }

  private tables(): Promise<PartitionedTable[]> {
    return this.db.query(
      `SELECT table_name, key_column, id_prefix, legacy_bound, fillfactor FROM time_partitioned_tables WHERE swapped
        ORDER BY table_name`,
    );
  }

  /** Makes the partitions from yesterday to PARTITION_DAYS_AHEAD days ahead that do not exist yet. */
  async makeAhead(report: PartitionReport = emptyReport()): Promise<PartitionReport> {
    const today = utcDay(this.clock.now());
    for (const table of await this.tables()) {
      for (let offset = -1; offset <= PARTITION_DAYS_AHEAD; offset += 1) {
        const day = new Date(today.getTime() + offset * DAY);
        const made = await this.makePartition(table, day);
        if (made !== null) {
          report.created.push(partitionName(table.table_name, day));
          report.movedFromDefault += made;
        }
      }
    }
    return report;
  }

  /**
   * One day's partition, unless it exists or the legacy partition still covers the day. The rows already in the
   * DEFAULT partition for that day move into it in the same short transaction. Returns the rows moved, or null when
   * nothing was made.
   */
  private async makePartition(table: PartitionedTable, day: Date): Promise<number | null> {
    const name = partitionName(table.table_name, day);
    const [lower, upper] = [idTimeBound(table.id_prefix, day), idTimeBound(table.id_prefix, addDays(day, 1))];
    if (table.legacy_bound !== null && lower < table.legacy_bound) return null;
    return withBoundedLockWait(() =>
      this.db.transaction(async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = '${LOCK_WAIT_MS}ms'`);
        const exists: unknown[] = await tx.query(`SELECT 1 FROM pg_class WHERE relname = $1`, [name]);
        if (exists.length > 0) return null;
        const parent = quote(table.table_name);
        const key = quote(table.key_column);
        const defaultPartition = quote(`${table.table_name}_default`);
        const storage = table.fillfactor === null ? '' : ` WITH (fillfactor = ${Number(table.fillfactor)})`;
        await tx.query(
          `CREATE TABLE ${quote(name)} (LIKE ${parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)${storage}`,
        );
        const moved: unknown[] = await tx.query(
          `WITH moved AS (DELETE FROM ${defaultPartition} WHERE ${key} >= $1 AND ${key} < $2 RETURNING *)
         INSERT INTO ${quote(name)} SELECT * FROM moved RETURNING 1`,
          [lower, upper],
        );
        await tx.query(
          `ALTER TABLE ${parent} ATTACH PARTITION ${quote(name)} FOR VALUES FROM ($$${lower}$$) TO ($$${upper}$$)`,
        );
        return moved.length;
      }),
    );
  }

  /**
   * Drops the day partitions (and the legacy one) whose IDs all end more than RECORD_RETENTION_DAYS ago, so every row
   * in them is past its 30 days. A messages partition goes (with its message_contents partition, same bounds) only
   * once every message in it has had its content erased (the sweep erases it at its retained_until, never while a
   * delivery may still be attempted) and none of its messages has a pending delivery; the later deliveries of its
   * messages (replays, made in later days' partitions) go with it, row by row. A deliveries partition goes once none
   * of its deliveries is pending. Attempts go by their own day.
   */
  async dropExpired(report: PartitionReport = emptyReport()): Promise<PartitionReport> {
    const cutoff = new Date(this.clock.now().getTime() - RECORD_RETENTION_DAYS * DAY);
    const tables = await this.tables();
    for (const table of tables) {
      if (table.table_name === 'message_contents') continue; // dropped with its messages partition
      const cutoffId = idTimeBound(table.id_prefix, cutoff);
      for (const partition of await this.partitions(table.table_name)) {
        if (partition.upper === null || partition.upper > cutoffId) continue;
        const dropped = await this.dropPartition(table, partition);
        if (dropped === null) continue;
        report.dropped.push(...dropped.names);
        report.strayDeliveriesDeleted += dropped.strays;
      }
    }
    return report;
  }

  /** The partitions of a table with their upper bounds, oldest first (DEFAULT last). */
  async partitions(table: string): Promise<Partition[]> {
    const rows: { name: string; bound: string }[] = await this.db.query(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = $1::regclass`,
      [table],
    );
    return rows
      .map((r) => ({ name: r.name, upper: /TO \('([^']+)'\)/.exec(r.bound)?.[1] ?? null }))
      .sort((a, b) => (a.upper === null ? 1 : b.upper === null ? -1 : a.upper < b.upper ? -1 : 1));
  }

  private async dropPartition(
    table: PartitionedTable,
    partition: Partition,
  ): Promise<{ names: string[]; strays: number } | null> {
    const lower = await this.lowerBound(table, partition);
    return withBoundedLockWait(() =>
      this.db.transaction(async (tx) => {
        // The checks and the deletes below wait for rows as any statement does; the parents' lock, taken last, waits
        // LOCK_WAIT_MS at most (see there).
        await tx.query(`SET LOCAL lock_timeout = '1s'`);
        const p = quote(partition.name);
        const lockParents = async (...parents: string[]) => {
          await tx.query(`SET LOCAL lock_timeout = '${LOCK_WAIT_MS}ms'`);
          await tx.query(`LOCK TABLE ONLY ${parents.map(quote).join(', ')} IN ACCESS EXCLUSIVE MODE`);
        };
        if (table.table_name === 'deliveries') {
          if (await exists(tx, `SELECT 1 FROM ${p} WHERE ${PENDING} LIMIT 1`)) return null;
          await lockParents('deliveries');
          // Its dead letters' entries go with it (the triggers that keep them see no DROP).
          await tx.query(`DELETE FROM delivery_dead_letters WHERE ($1::text IS NULL OR id >= $1) AND id < $2`, [
            lower,
            partition.upper,
          ]);
          await tx.query(`DROP TABLE ${p}`);
          await this.forgetLegacy(tx, table, partition);
          return { names: [partition.name], strays: 0 };
        }
        if (table.table_name === 'attempts') {
          await lockParents('attempts');
          await tx.query(`DROP TABLE ${p}`);
          await this.forgetLegacy(tx, table, partition);
          return { names: [partition.name], strays: 0 };
        }
        // messages (and message_contents with the same bounds)
        if (await exists(tx, `SELECT 1 FROM ${p} WHERE content_erased_at IS NULL LIMIT 1`)) return null;
        const range = [lower ?? '', partition.upper];
        if (
          await exists(
            tx,
            `SELECT 1 FROM deliveries WHERE ${PENDING} AND message_id >= $1 AND message_id < $2 LIMIT 1`,
            range,
          )
        )
          return null;
        // Only from the days after this one: the deliveries made on this day or before go with their own partitions
        // (a day of deliveries kept by one pending replay must not be deleted row by row here).
        const laterDays = `wdd_${partition.upper!.slice(table.id_prefix.length)}`;
        const strays: { id: string }[] = await tx.query(
          `WITH gone AS (DELETE FROM deliveries WHERE message_id >= $1 AND message_id < $2 AND id >= $3 RETURNING id)
           SELECT id FROM gone`,
          [...range, laterDays],
        );
        if (strays.length > 0)
          await tx.query(`DELETE FROM attempts WHERE delivery_id = ANY($1::text[])`, [strays.map((s) => s.id)]);
        const contents = partition.name.replace(/^messages/, 'message_contents');
        const names = [partition.name];
        // Both parents at once, in the order admission writes them (messages, then its content).
        await lockParents('messages', 'message_contents');
        if (await exists(tx, `SELECT 1 FROM pg_class WHERE relname = $1`, [contents])) {
          await tx.query(`DROP TABLE ${quote(contents)}`);
          names.push(contents);
          const contentsTable = { ...table, table_name: 'message_contents' };
          await this.forgetLegacy(tx, contentsTable, { name: contents, upper: partition.upper });
        }
        await tx.query(`DROP TABLE ${p}`);
        await this.forgetLegacy(tx, table, partition);
        return { names, strays: strays.length };
      }),
    );
  }

  /** The lower bound of a day partition (its name's day), or null for the legacy one (from MINVALUE). */
  private async lowerBound(table: PartitionedTable, partition: Partition): Promise<string | null> {
    const day = /_p(\d{4})(\d{2})(\d{2})$/.exec(partition.name);
    if (!day) return null;
    return idTimeBound(table.id_prefix, new Date(`${day[1]}-${day[2]}-${day[3]}T00:00:00Z`));
  }

  private async forgetLegacy(tx: EntityManager, table: PartitionedTable, partition: Partition): Promise<void> {
    if (partition.name === `${table.table_name}_legacy`)
      await tx.query(`UPDATE time_partitioned_tables SET legacy_bound = NULL WHERE table_name = $1`, [
        table.table_name,
      ]);
  }
}

/**
 * Runs one maintenance transaction, again after a pause when it timed out waiting for a lock (lock_timeout: a busy
 * table), up to LOCK_TRIES times; then it is left to the next run, which tries again, and the rest of this run goes
 * on (null). Null too when another run made or dropped the same partition first.
 */
async function withBoundedLockWait<T>(run: () => Promise<T>): Promise<T | null> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      const code =
        (error as { code?: string; driverError?: { code?: string } }).driverError?.code ??
        (error as { code?: string }).code;
      // Another maintenance run got there first (runs of two workers, or a worker's start beside a scheduled run):
      // the partition it made exists (duplicate_table), the one it dropped is gone (undefined_table).
      if (code === '42P07' || code === '42P01') return null;
      if (code !== '55P03') throw error;
      if (attempt >= LOCK_TRIES) return null;
      await new Promise((resolve) => setTimeout(resolve, LOCK_PAUSE_MS * (0.5 + Math.random())));
    }
  }
}

function emptyReport(): PartitionReport {
  return { created: [], movedFromDefault: 0, dropped: [], strayDeliveriesDeleted: 0, analyzed: [] };
}

async function exists(tx: EntityManager, sql: string, params: unknown[] = []): Promise<boolean> {
  const rows: unknown[] = await tx.query(sql, params);
  return rows.length > 0;
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * The smallest ID of `prefix` made at `at` (its milliseconds, then 80 zero bits, as newId encodes them): the bound
 * between two days' partitions. The SQL function id_time_bound (migration 0041) computes the same string.
 */
export function idTimeBound(prefix: string, at: Date): string {
  // The first 10 characters hold 50 bits: the 48-bit milliseconds and two zero bits.
  let value = BigInt(at.getTime()) << 2n;
  let out = '';
  for (let i = 0; i < 10; i += 1) {
    out = CROCKFORD[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return prefix + out + '0'.repeat(16);
}

/** Midnight UTC of the day `at` falls in. */
export function utcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

function addDays(day: Date, days: number): Date {
  return new Date(day.getTime() + days * DAY);
}

/** The partition of `table` for the IDs made on `day` (UTC): table_pYYYYMMDD, as migration 0041 names them. */
export function partitionName(table: string, day: Date): string {
  return `${table}_p${day.toISOString().slice(0, 10).replace(/-/g, '')}`;
}
