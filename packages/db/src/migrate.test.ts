import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { ensureDatabase, loadMigrations, runMigrations, STEP_LOCK_TIMEOUT_MS } from './migrate.js';

const created: string[] = [];
async function emptyDatabase(): Promise<string> {
  const url = new URL(process.env['SVC_TEST_DATABASE_URL']!);
  url.pathname = `/mig_${randomBytes(5).toString('hex')}`;
  await ensureDatabase(url.toString());
  created.push(url.toString());
  return url.toString();
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: process.env['SVC_TEST_DATABASE_URL'] });
  await admin.connect();
  for (const url of created)
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  await admin.end();
});

describe('migrations', () => {
  it('are numbered SQL files applied in order', () => {
    const ids = loadMigrations().map((m) => m.id);
    expect(ids[0]).toBe('0001_init');
    expect([...ids].sort()).toEqual(ids);
  });

  it('apply exactly once when many processes start at the same time, and are recorded', async () => {
    const url = await emptyDatabase();
    const results = await Promise.all([runMigrations(url), runMigrations(url), runMigrations(url)]);
    const applied = results.flat();
    expect(applied).toEqual(loadMigrations().map((m) => m.id));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const rows = await client.query('SELECT id FROM schema_migrations ORDER BY id');
    await client.end();
    expect(rows.rows.map((r: { id: string }) => r.id)).toEqual(applied);
    expect(await runMigrations(url)).toEqual([]);
  });

  it("make a missing database with byte-order text comparison and the cluster's character classes", async () => {
    const url = await emptyDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query(
      `SELECT d.datcollate, d.datctype = t.datctype AS same_ctype, 'B' < 'a' AS byte_order
         FROM pg_database d, pg_database t WHERE d.datname = current_database() AND t.datname = 'template1'`,
    );
    await client.end();
    expect(rows).toEqual([{ datcollate: 'C', same_ctype: true, byte_order: true }]);
  });

  it('roll back a failing migration and leave it unrecorded', async () => {
    const url = await emptyDatabase();
    await expect(
      runMigrations(url, [
        { id: '0001_ok', sql: 'CREATE TABLE a (x int)' },
        { id: '0002_bad', sql: 'CREATE TABLE b (x nosuchtype)' },
      ]),
    ).rejects.toThrow(/0002_bad/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const rows = await client.query('SELECT id FROM schema_migrations');
    const tables = await client.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'b'",
    );
    await client.end();
    expect(rows.rows).toEqual([{ id: '0001_ok' }]);
    expect(tables.rows[0].n).toBe(0);
  });

  it('refuse a file numbered below the last applied one, before applying anything, naming it', async () => {
    const url = await emptyDatabase();
    const shipped = loadMigrations();
    expect(await runMigrations(url, shipped)).toHaveLength(shipped.length);
    // A late file that landed in a gap of the numbering (0020 is free) and one numbered after the last.
    const late = { id: '0020_late', sql: 'CREATE TABLE late_table (x int)' };
    const next = { id: '9999_next', sql: 'CREATE TABLE next_table (x int)' };
    const all = [...shipped, late, next].sort((a, b) => (a.id < b.id ? -1 : 1));
    const last = shipped.at(-1)!.id;
    await expect(runMigrations(url, all)).rejects.toThrow(
      new RegExp(`^migration 0020_late is numbered below the last applied migration ${last}; .*renumber it`),
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const tables = await client.query(
      "SELECT table_name FROM information_schema.tables WHERE table_name IN ('late_table', 'next_table')",
    );
    const recorded = await client.query("SELECT id FROM schema_migrations WHERE id IN ('0020_late', '9999_next')");
    await client.end();
    expect({ tables: tables.rows, recorded: recorded.rows }).toEqual({ tables: [], recorded: [] });
    // Renumbered after the last applied one, it applies.
    expect(await runMigrations(url, [...shipped, { ...late, id: '9998_late' }, next])).toEqual([
      '9998_late',
      '9999_next',
    ]);
  });

  it('run a stepped file one transaction a step, never waiting over the lock timeout, retrying a busy step', async () => {
    const url = await emptyDatabase();
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('CREATE TABLE busy (n int)');
    const stepped = {
      id: '0001_stepped',
      sql: [
        '-- migrate: steps',
        '-- step: committed before the busy one waits',
        'CREATE TABLE first_step (n int);',
        '-- step: waits for the lock the holder keeps for 2.5 s',
        'ALTER TABLE busy ADD COLUMN m int;',
      ].join('\n'),
    };
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE busy IN ACCESS SHARE MODE');
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    const running = runMigrations(url, [stepped]);
    // While the holder keeps its lock: the first step has committed; the second waits no longer than the timeout.
    const waits: number[] = [];
    let firstCommitted = false;
    const started = Date.now();
    while (Date.now() - started < 2_500) {
      const rows = await watcher.query(
        `SELECT coalesce(max(extract(epoch FROM now() - a.state_change)) * 1000, 0)::float8 AS ms,
                to_regclass('first_step') IS NOT NULL AS first
           FROM pg_stat_activity a WHERE a.wait_event_type = 'Lock' AND a.datname = current_database()`,
      );
      waits.push(rows.rows[0].ms);
      firstCommitted ||= rows.rows[0].first;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await holder.query('COMMIT');
    expect(await running).toEqual(['0001_stepped']);
    expect(firstCommitted).toBe(true);
    expect(Math.max(...waits)).toBeGreaterThan(0);
    expect(Math.max(...waits)).toBeLessThan(STEP_LOCK_TIMEOUT_MS + 200);
    const columns = await watcher.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'busy' AND column_name = 'm'`,
    );
    expect(columns.rowCount).toBe(1);
    await watcher.end();
    await holder.end();
  });
});
