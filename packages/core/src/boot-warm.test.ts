import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, fixedHotStatements, pgPoolOf } from '@svc/db';
import { systemClock } from './common/clock.js';
import { openCore, openProductionCore, type OpenedCore } from './boot.js';
import { readCoreConfig } from './config.js';
import { testCoreOptions } from './testing/core-options.js';

/**
 * The production processes' pools (warmPools): every connection opened at start with the hot statements planned on
 * it, and kept through a quiet spell; node-postgres' default closes a connection idle for 10 s, and a burst after
 * one then waited on new backends (docs/scaling.md). On the real clock: the idle timeout is node-postgres' own.
 */
const databases: { url: string; drop(): Promise<void> }[] = [];
let warm: OpenedCore;
let plain: OpenedCore;

beforeAll(async () => {
  databases.push(await createTestDatabase(), await createTestDatabase());
  warm = await openCore({ ...testCoreOptions(databases[0]!.url, systemClock), poolSize: 6, warmPools: true });
  plain = await openCore({ ...testCoreOptions(databases[1]!.url, systemClock), poolSize: 6 });
}, 60_000);
afterAll(async () => {
  await warm?.close();
  await plain?.close();
  for (const database of databases) await database.drop();
});

/** Client backends connected to a test database now. */
async function backends(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

describe('warm pools', () => {
  it('open every connection of both pools and plan every fixed hot statement on each', async () => {
    const planned = await warm.warmed;
    const statements = fixedHotStatements().length;
    expect(statements).toBeGreaterThan(3);
    // TypeORM's pool (6 here) and the hot-statement pool (4): a statement that cannot be planned without values would
    // be skipped and show here.
    expect(planned).toBe((6 + 4) * statements);
    expect(await backends(databases[0]!.url)).toBeGreaterThanOrEqual(10);
    expect(await plain.warmed).toBe(0);
  });

  it('keep their connections through a quiet spell past the 10 s idle timeout, where a plain core closes them', async () => {
    await warm.warmed;
    // The plain core's pool opens connections as it is used: a few queries at once, then nothing.
    await Promise.all(Array.from({ length: 4 }, () => plain.services.db.query('SELECT pg_sleep(0.05)')));
    const open = (core: OpenedCore) => ({
      typeorm: pgPoolOf(core.services.db).totalCount,
      hot: core.services.hot.connections,
    });
    const before = { warm: open(warm), plain: open(plain) };
    expect(before.warm).toEqual({ typeorm: 6, hot: 4 });
    expect(before.plain.typeorm).toBeGreaterThanOrEqual(4);
    await new Promise((resolve) => setTimeout(resolve, 11_500));
    expect(open(warm)).toEqual(before.warm);
    expect(open(plain).typeorm).toBe(0);
    expect(await backends(databases[0]!.url)).toBeGreaterThanOrEqual(10);
  }, 30_000);

  it('a production process opens as many main connections as SVC_DB_POOL_SIZE says, and warms each', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const config = readCoreConfig(
      {
        DATABASE_URL: database.url,
        SVC_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
        SVC_PUBLIC_BASE_URL: 'https://hooks.example.com',
        SVC_DB_POOL_SIZE: '3',
      },
      'production',
    );
    const core = await openProductionCore(config, systemClock);
    try {
      expect(await core.warmed).toBe((3 + 4) * fixedHotStatements().length);
      const pool = pgPoolOf(core.services.db);
      expect({ max: pool.options.max, open: pool.totalCount }).toEqual({ max: 3, open: 3 });
    } finally {
      await core.close();
    }
  });
});
