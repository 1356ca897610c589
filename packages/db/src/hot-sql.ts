import pg from 'pg';
import { poolConfig, DEFAULT_SESSION_TIMEOUTS } from './data-source.js';

/** A statement of a hot path: its text and the name it is prepared under on each connection. */
export interface HotStatement {
  readonly name: string;
  readonly text: string;
}

export function hotStatement(name: string, text: string): HotStatement {
  return { name, text };
}

/**
 * The hot paths' statements (claim, settle, admission) are large CTEs: Postgres spent about 2 ms planning the claim
 * for under 1 ms of execution. Here each statement is prepared once per connection (a named statement) and its
 * plan kept: the connections run with plan_cache_mode = force_generic_plan, so a statement is planned once, not at
 * every execution (with `auto`, Postgres kept re-planning these array-parameter statements). Only named statements
 * of this pool see that setting; every other query runs through TypeORM's pool as before.
 */
export class HotSql {
  private constructor(private readonly pool: pg.Pool) {}

  static open(databaseUrl: string, max: number): HotSql {
    const pool = new pg.Pool({
      ...poolConfig(databaseUrl, max, DEFAULT_SESSION_TIMEOUTS),
      options: '-c plan_cache_mode=force_generic_plan',
    });
    // A connection that breaks is dropped from the pool; the query that used it fails on its own.
    pool.on('error', () => undefined);
    return new HotSql(pool);
  }

  async query<R>(statement: HotStatement, values: readonly unknown[]): Promise<R[]> {
    const result = await this.pool.query({ name: statement.name, text: statement.text, values: [...values] });
    return result.rows as R[];
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
