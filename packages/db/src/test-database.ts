import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { ADVISORY_LOCKS, withAdvisoryLock } from './advisory-lock.js';
import { loadMigrations, runMigrations } from './migrate.js';

/**
 * One database per test file on the cluster that the test run's global set-up started
 * (SVC_TEST_DATABASE_URL points at its maintenance database).
 *
 * Each is a copy of a template that the first caller of the run migrated (CREATE DATABASE ... TEMPLATE): running
 * the 40-odd migrations took 0.9 to 1.4 s per database on 2 loaded cores, the copy 0.3 to 0.4 s, and a test run makes
 * a database for every file. The template's name holds a hash of the migrations, so a cluster kept between runs
 * (SVC_TEST_DATABASE_URL set by hand) never serves a schema older than the files. The copy is the migrated database
 * byte for byte, schema_migrations included; a migration that set per-database settings (ALTER DATABASE ... SET,
 * which a template does not carry) would need this to change: none does.
 */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env['SVC_TEST_DATABASE_URL'];
  if (!admin)
    throw new Error('SVC_TEST_DATABASE_URL is not set: run tests through vitest (its global set-up starts Postgres)');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    const template = await migratedTemplate(client, admin);
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await client.end();
  }
  return {
    url: urlOf(admin, name),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** The template of this schema, made (migrated, then marked a template) by the first process that needs it. */
async function migratedTemplate(client: pg.Client, admin: string): Promise<string> {
  const hash = createHash('sha256');
  for (const migration of loadMigrations()) hash.update(migration.id).update('\0').update(migration.sql).update('\0');
  const template = `test_template_${hash.digest('hex').slice(0, 16)}`;
  const ready = async (on: pg.Client) =>
    (await on.query(`SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate`, [template])).rowCount === 1;
  if (await ready(client)) return template;
  return withAdvisoryLock(admin, ADVISORY_LOCKS.testTemplate, async (locked) => {
    if (await ready(locked)) return template;
    // Migrated under another name, then renamed and marked: a process that died half way leaves no template that
    // looks ready, only a scratch database the next maker drops.
    const scratch = `${template}_making`;
    await locked.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
    await locked.query(`CREATE DATABASE ${scratch}`);
    await runMigrations(urlOf(admin, scratch));
    // The migrations' connection has ended, but its backend may still be exiting: a rename waits for it.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await locked.query(`ALTER DATABASE ${scratch} RENAME TO ${template}`);
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    await locked.query(`ALTER DATABASE ${template} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    return template;
  });
}

function urlOf(admin: string, database: string): string {
  const url = new URL(admin);
  url.pathname = `/${database}`;
  return url.toString();
}
