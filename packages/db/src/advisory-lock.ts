import pg from 'pg';

/**
 * Runs `work` while this process holds a session advisory lock, on a connection of its own that `work` may use:
 * processes that start at once (servers, workers, the admin CLI) do a one-time setup one after another. The lock is
 * released with the session, also when `work` throws.
 */
export async function withAdvisoryLock<T>(
  databaseUrl: string,
  lockId: number,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [lockId]);
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The advisory locks of the one-time setups, in one place so no two share a number. */
export const ADVISORY_LOCKS = {
  /** Applying migrations (runMigrations). */
  migrations: 7_203_117_001,
  /** Making the test run's migrated template database (createTestDatabase). */
  testTemplate: 7_203_117_002,
  /** Creating pg-boss queues (pg-boss 10 does not serialise it itself; ensureQueues in @svc/core). */
  jobQueues: 7_203_117_003,
} as const;
