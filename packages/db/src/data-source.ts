import 'reflect-metadata';
import type pg from 'pg';
import { DataSource, type EntityManager, type MixedList, type EntitySchema } from 'typeorm';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type EntityList = MixedList<Function | string | EntitySchema>;

/**
 * Session timeouts every pool sets (server, worker, pg-boss, admin), so a stuck statement, a lock wait or a
 * transaction left open by a stalled request ends with an error instead of holding rows and connections forever.
 */
export interface SessionTimeouts {
  statement_timeout: number;
  lock_timeout: number;
  idle_in_transaction_session_timeout: number;
}

export const DEFAULT_SESSION_TIMEOUTS: SessionTimeouts = {
  statement_timeout: 30_000,
  lock_timeout: 10_000,
  idle_in_transaction_session_timeout: 60_000,
};

/**
 * The service's own pools keep their connections once made (node-postgres closes one idle for 10 s by default): a
 * burst after a quiet spell otherwise opened new backends, whose first statements are several times slower (their
 * catalog caches are empty), and the first 200 ms of the burst waited on them. A pool holds at most its `max`
 * (docs/scaling.md, "Settings that matter").
 */
export const KEEP_CONNECTIONS = { idleTimeoutMillis: 0 } as const;

/** node-postgres connection settings (for pg.Pool, pg-boss) with the session timeouts applied. */
export function poolConfig(
  databaseUrl: string,
  max: number,
  timeouts: SessionTimeouts = DEFAULT_SESSION_TIMEOUTS,
): { connectionString: string; max: number } & SessionTimeouts {
  return { connectionString: databaseUrl, max, ...timeouts };
}

export async function openDataSource(
  databaseUrl: string,
  entities: EntityList,
  poolSize = 10,
  timeouts: SessionTimeouts = DEFAULT_SESSION_TIMEOUTS,
  keepConnections = false,
): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: databaseUrl,
    entities,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { max: poolSize, ...timeouts, ...(keepConnections ? KEEP_CONNECTIONS : {}) },
  });
  await dataSource.initialize();
  return dataSource;
}

/** The node-postgres pool under a data source: for work TypeORM has no call for (LISTEN, a simple-protocol batch). */
export function pgPoolOf(db: DataSource): pg.Pool {
  return (db.driver as unknown as { master: pg.Pool }).master;
}

export type { DataSource, EntityManager };
