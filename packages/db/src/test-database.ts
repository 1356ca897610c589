import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { runMigrations } from './migrate.js';

/**
 * One database per test file on the cluster that the test run's global set-up started
 * (SVC_TEST_DATABASE_URL points at its maintenance database).
 */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env['SVC_TEST_DATABASE_URL'];
  if (!admin)
    throw new Error('SVC_TEST_DATABASE_URL is not set: run tests through vitest (its global set-up starts Postgres)');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  await runMigrations(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
