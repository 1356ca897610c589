import { createHash } from 'node:crypto';
import pg from 'pg';
import { poolConfig, DEFAULT_SESSION_TIMEOUTS, KEEP_CONNECTIONS } from './data-source.js';
import { transactionInOneRoundTrip, type RoundTripPart } from './one-round-trip.js';

/** A statement of a hot path: its text and the name it is prepared under on each connection. */
export interface HotStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * Every prepared statement of the service is one of these, whichever connection runs it: `HotSql.query` on the hot
 * paths' own pool (statements that run on their own: claim, settle, report), `queryPrepared` (@svc/core) on a
 * transaction's connection (admission, a settlement with events). A fixed statement is named here, with its version
 * in the name; a statement composed at run time (admission's write, whose parts depend on the batch) gets its name
 * from its text (`preparedStatement`).
 */
export function hotStatement(name: string, text: string): HotStatement {
  const statement = { name, text };
  fixedStatements.push(statement);
  return statement;
}

/** Every fixed hot statement of the process (they are made when their modules load): what `warmPool` plans. */
const fixedStatements: HotStatement[] = [];

/** The fixed hot statements made so far (tests). */
export function fixedHotStatements(): readonly HotStatement[] {
  return fixedStatements;
}

/**
 * Opens every connection a pool may use and plans each fixed hot statement on it once (`EXPLAIN (GENERIC_PLAN)`, which
 * needs no parameter values), so that the backends exist and their catalog caches hold the tables, indexes and
 * functions those statements read. A new backend's first claim took 12 to 22 ms instead of 2 to 4 (its caches are
 * empty, and the connection is made first): after a quiet spell the pools had closed their connections, and the first
 * 200 ms of a burst queued behind such claims and admissions (docs/benchmarks.md). With the pools keeping their
 * connections (KEEP_CONNECTIONS), this runs once per process. Best effort: a statement that cannot be explained (an
 * older schema during an upgrade) is skipped.
 */
export async function warmPool(
  pool: { connect(): Promise<{ query(text: string): Promise<unknown>; release(): void }> },
  connections: number,
): Promise<number> {
  // All at once, so that each is a connection of its own; each goes back to the pool as soon as it is warm (requests
  // that come meanwhile wait for the first one free).
  const connecting = Array.from({ length: connections }, () => pool.connect());
  let planned = 0;
  const results = await Promise.allSettled(
    connecting.map(async (connected) => {
      const client = await connected;
      try {
        for (const statement of fixedStatements) {
          try {
            await client.query(`EXPLAIN (GENERIC_PLAN) ${statement.text}`);
            planned += 1;
          } catch {
            // Skipped: warming is an optimisation, never a reason to fail.
          }
        }
      } finally {
        client.release();
      }
    }),
  );
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return planned;
}

const composedNames = new Map<string, HotStatement>();
/** Distinct composed texts kept: past this the cache starts over (each connection keeps what it prepared). */
const MAX_COMPOSED_STATEMENTS = 1_000;

/** A statement composed at run time, named by its text: the same text is the same prepared statement. */
export function preparedStatement(text: string): HotStatement {
  let statement = composedNames.get(text);
  if (!statement) {
    statement = { name: `svc_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text };
    if (composedNames.size >= MAX_COMPOSED_STATEMENTS) composedNames.clear();
    composedNames.set(text, statement);
  }
  return statement;
}

export interface HotSqlDiagnostics {
  sessionOptions?: string;
  onNotice?: (message: string) => void;
}

export interface HotSqlOptions extends HotSqlDiagnostics {
  /** Keep connections once made (KEEP_CONNECTIONS): the production processes, which also warm the pool. */
  keepConnections?: boolean;
}

const HOT_SESSION_OPTIONS = '-c plan_cache_mode=force_generic_plan -c enable_seqscan=off -c enable_bitmapscan=off';

/**
 * The hot paths' statements (claim, settle, admission) are large CTEs: Postgres spent about 2 ms planning the claim
 * for under 1 ms of execution. Here each statement is prepared once per connection (a named statement) and its
 * plan kept: the connections run with plan_cache_mode = force_generic_plan, so a statement is planned once, not at
 * every execution (with `auto`, Postgres kept re-planning these array-parameter statements). Only named statements
 * of this pool see that setting; every other query runs through TypeORM's pool as before.
 *
 * A generic plan is made from the statistics of the moment it is prepared, and kept for the connection's life. A
 * worker that starts beside empty queue tables (a new installation, a benchmark) would keep plans that scan them
 * whole: the claim took 80 ms with 821 queued rows, a sequential scan and a nested-loop join filter per claimed
 * row. Every hot statement is written to reach its rows through an index (a queue row by its endpoint and due time,
 * a delivery by its ID), so these connections also run with enable_seqscan = off: a plan made beside an empty table
 * stays an index plan when the table grows. (A table with no usable index is still scanned.) And with
 * enable_bitmapscan = off: the claim's "oldest due rows of this endpoint, LIMIT n" was planned as a bitmap scan of
 * every row of the endpoint and a sort, 1.2 ms of a 1.2 ms claim with 3,000 rows behind one endpoint; the index
 * scan in (endpoint_id, due_at) order stops after n rows (0.23 ms for the whole claim).
 */
export class HotSql {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly max: number,
  ) {}

  /**
   * `options`: whether to keep connections once made (the production processes), and, for tests that look at the
   * plans, more session settings (for example auto_explain's) and a listener for the server's notices on every
   * connection.
   */
  static open(databaseUrl: string, max: number, options: HotSqlOptions = {}): HotSql {
    const pool = new pg.Pool({
      ...poolConfig(databaseUrl, max, DEFAULT_SESSION_TIMEOUTS),
      ...(options.keepConnections ? KEEP_CONNECTIONS : {}),
      options: [HOT_SESSION_OPTIONS, options.sessionOptions].filter(Boolean).join(' '),
    });
    // A connection that breaks is dropped from the pool; the query that used it fails on its own.
    pool.on('error', () => undefined);
    const onNotice = options.onNotice;
    if (onNotice) pool.on('connect', (client) => client.on('notice', (notice) => onNotice(notice.message ?? '')));
    return new HotSql(pool, max);
  }

  /** Connections open now. */
  get connections(): number {
    return this.pool.totalCount;
  }

  /** Opens all the pool's connections and plans the hot statements on each (`warmPool`). */
  warm(): Promise<number> {
    return warmPool(this.pool, this.max);
  }

  async query<R>(statement: HotStatement, values: readonly unknown[]): Promise<R[]> {
    const result = await this.pool.query({ name: statement.name, text: statement.text, values: [...values] });
    return result.rows as R[];
  }

  /**
   * The parts as one transaction in one round trip on a connection of this pool, whose planner settings apply
   * (`transactionInOneRoundTrip`): each part's rows.
   */
  async transactionInOneRoundTrip(parts: readonly RoundTripPart[]): Promise<unknown[][]> {
    return transactionInOneRoundTrip(await this.pool.connect(), parts);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
