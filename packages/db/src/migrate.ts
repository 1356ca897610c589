import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ADVISORY_LOCKS, withAdvisoryLock } from './advisory-lock.js';

export const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../prisma-free-schema');

export interface Migration {
  readonly id: string;
  readonly sql: string;
}

export function loadMigrations(dir = SCHEMA_DIR): Migration[] {
  return readdirSync(dir)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ id: name.replace(/\.sql$/, ''), sql: readFileSync(path.join(dir, name), 'utf8') }));
}

/**
 * The files not applied yet, in order; refused whole when one of them sorts before the last applied migration: it
 * would run after migrations numbered later than itself (the numbering has gaps, so a late file can land in one),
 * against a schema its author never saw. Nothing is applied then; the message names the file and what to do.
 */
export function pendingMigrations(migrations: readonly Migration[], applied: readonly string[]): Migration[] {
  const done = new Set(applied);
  const last = [...applied].sort().at(-1);
  const pending = migrations.filter((m) => !done.has(m.id));
  const early = last === undefined ? [] : pending.filter((m) => m.id < last);
  if (early.length > 0)
    throw new Error(
      `migration ${early.map((m) => m.id).join(', ')} is numbered below the last applied migration ${last}; ` +
        'migrations apply in number order, so renumber it after the last applied one (prisma-free-schema/README.md)',
    );
  return pending;
}

/**
 * Applies the numbered SQL files in order, each in its own transaction, under a session advisory lock so
 * that many processes starting at once apply each migration exactly once. A file numbered below the last applied
 * one is refused before anything runs (pendingMigrations).
 */
export function runMigrations(databaseUrl: string, migrations = loadMigrations()): Promise<string[]> {
  return withAdvisoryLock(databaseUrl, ADVISORY_LOCKS.migrations, async (client) => {
    const applied: string[] = [];
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = (await client.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id);
    for (const migration of pendingMigrations(migrations, done)) {
      const steps = migrationSteps(migration.sql);
      try {
        for (const [index, step] of steps.entries()) {
          const last = index === steps.length - 1;
          await runStep(client, step, steps.length > 1, last ? migration.id : null);
        }
        applied.push(migration.id);
      } catch (error) {
        throw new Error(`migration ${migration.id} failed: ${(error as Error).message}`);
      }
    }
    return applied;
  });
}

/**
 * A file that starts with `-- migrate: steps` runs as several transactions, split at lines starting `-- step`, so
 * that a long step that blocks no writer (VALIDATE CONSTRAINT) never runs under the lock a later step takes. Each
 * step waits at most STEP_LOCK_TIMEOUT for a lock and is retried when it times out (a busy table), so no step queues
 * writers behind it for longer than that (plus the step's own short run). Steps must be safe to run again: a failure after some committed reruns the
 * file from its first step at the next start. Any other file is one transaction, as before.
 */
export function migrationSteps(sql: string): string[] {
  if (!sql.startsWith('-- migrate: steps')) return [sql];
  return sql
    .split(/^-- step\b.*$/m)
    .slice(1)
    .map((step) => step.trim())
    .filter((step) => step.length > 0);
}

/** Longest lock wait of one step of a stepped migration (lock_timeout), and how often a timed-out step is retried. */
export const STEP_LOCK_TIMEOUT_MS = 250;
const STEP_LOCK_RETRIES = 400;

async function runStep(client: pg.Client, sql: string, stepped: boolean, recordAs: string | null): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    await client.query('BEGIN');
    try {
      if (stepped) await client.query(`SET LOCAL lock_timeout = '${STEP_LOCK_TIMEOUT_MS}ms'`);
      await client.query(sql);
      if (recordAs) await client.query('INSERT INTO schema_migrations (id) VALUES ($1)', [recordAs]);
      await client.query('COMMIT');
      return;
    } catch (error) {
      await client.query('ROLLBACK');
      // lock_not_available (the timeout) or deadlock_detected (a step that locks two tables, as a dropped foreign key
      // does, against a transaction of the service that took them in the other order): the step waits and runs again.
      const busy = ['55P03', '40P01'].includes((error as { code?: string }).code ?? '');
      if (!stepped || !busy || attempt >= STEP_LOCK_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
    }
  }
}

/**
 * Creates the database named in the URL when it does not exist (connects to the maintenance database), with the C
 * collation: every key is an ASCII ID, and byte order spares Postgres the locale's string comparison in every index
 * lookup, sort and partition routing (12% of Postgres's CPU per fan-out delivery, docs/deploying.md, "Collation").
 * The character classes (upper(), lower(), ILIKE) stay those of the cluster's default.
 */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name || name === 'postgres') return;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      const ctype = await client.query<{ datctype: string }>(
        `SELECT datctype FROM pg_database WHERE datname = 'template1'`,
      );
      await client.query(
        `CREATE DATABASE ${client.escapeIdentifier(name)} TEMPLATE template0 LOCALE_PROVIDER libc LC_COLLATE 'C' ` +
          `LC_CTYPE ${client.escapeLiteral(ctype.rows[0]?.datctype ?? 'C')}`,
      );
    }
  } finally {
    await client.end();
  }
}
