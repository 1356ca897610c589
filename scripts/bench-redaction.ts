/**
 * Redaction completion at volume (docs/retention.md, docs/benchmarks.md): `npx tsx scripts/bench-redaction.ts`.
 * It starts its own Postgres, stores BENCH_REDACTION_MESSAGES messages (default 200,000) with their content and one
 * delivery each (a 512-byte body and its frozen copy), vacuums them once (a table that has been there a while), and
 * then, in each round, plays 5 minutes of a busy service (5% of the deliveries settle, 1% more messages arrive) and a
 * redaction before measuring:
 *
 *   before  the statement the sweep ran every 5 minutes while a redaction waited:
 *           VACUUM (PROCESS_TOAST) message_contents, deliveries
 *   after   the fallback it runs now, at most once an hour and only when autovacuum has not covered a redaction:
 *           VACUUM (PROCESS_TOAST, INDEX_CLEANUP OFF, TRUNCATE OFF) messages, message_contents, deliveries
 *   sweep   a run of completeRedactions that proves through the vacuum counts (no VACUUM)
 *
 * Prints a table and writes .tmp/bench-redaction.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { limitsWith, openCore, RATE_VERSION, systemClock, testCoreOptions } from '@svc/core';
import { createBenchEndpoint, startBenchDatabase } from './bench-setup.js';

const MESSAGES = Number(process.env['BENCH_REDACTION_MESSAGES'] ?? 200_000);
const ROUNDS = Number(process.env['BENCH_REDACTION_ROUNDS'] ?? 3);
const BATCH = 20_000;

interface Seeded {
  teamId: string;
  tenantId: string;
  endpointId: string;
  keyId: string;
}

/** `count` messages with content and one settled delivery each, named `wdm_<prefix>_<n>`. */
async function insertMessages(db: DataSource, seeded: Seeded, prefix: string, count: number): Promise<void> {
  await db.query(
    `WITH m AS (
       INSERT INTO messages (id, team_id, tenant_id, event_type, origin, content_type, body_bytes, body_sha256,
                             deliver_at, expires_at, retained_until, paying_key_id, ingest_units, delivery_units,
                             price_micros, rate_version, created_at)
       SELECT 'wdm_' || $1 || '_' || g, $2, $3, 'bench.event', 'api', 'application/octet-stream', 512,
              md5(g::text) || md5(g::text), now(), now() + interval '72 hours', now() + interval '30 days', $4, 1, 1,
              0, $6, now()
         FROM generate_series(1, $5::int) g
       RETURNING id, expires_at),
     c AS (INSERT INTO message_contents (message_id, team_id, body)
           SELECT id, $2, decode(repeat(md5(id), 32), 'hex') FROM m)
     INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, next_attempt_at,
                             expires_at, body, body_bytes, content_type, delivery_units, created_at, updated_at,
                             finished_at)
     SELECT 'wdd_' || substr(m.id, 5), $2, $3, m.id, $7, 'bench.event', 'succeeded', now(), m.expires_at,
            decode(repeat(md5(m.id || 'd'), 32), 'hex'), 512, 'application/octet-stream', 1, now(), now(), now()
       FROM m`,
    [prefix, seeded.teamId, seeded.tenantId, seeded.keyId, count, RATE_VERSION, seeded.endpointId],
  );
}

/** Five minutes of a busy service: 5% of the deliveries are written again (settled), 1% more messages arrive. */
async function churn(db: DataSource, seeded: Seeded, round: number, stored: number): Promise<void> {
  await db.query(
    `UPDATE deliveries SET updated_at = now(), last_attempt_at = now()
      WHERE id IN (SELECT id FROM deliveries TABLESAMPLE SYSTEM (5))`,
  );
  await insertMessages(db, seeded, `churn${round}`, Math.max(1, Math.floor(stored / 100)));
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function vacuum(db: DataSource, statement: string): Promise<number> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SET statement_timeout = 0');
    return await timed(() => runner.query(statement));
  } finally {
    await runner.release();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const { databaseUrl, stop } = await startBenchDatabase('redaction');
  try {
    const core = await openCore(testCoreOptions(databaseUrl, systemClock, { poolSize: 4, limits: limitsWith({}) }));
    const { services } = core;
    const db = services.db;
    try {
      const team = await services.teams.createTeam('bench');
      const key = await services.teams.createKey(team.id);
      const ctx = { actor: { teamId: team.id, keyId: key.keyId } };
      const seeded = { teamId: team.id, keyId: key.keyId, ...(await createBenchEndpoint(services, ctx)) };
      const seedMs = await timed(async () => {
        for (let done = 0; done < MESSAGES; done += BATCH)
          await insertMessages(db, seeded, `seed${done / BATCH}`, Math.min(BATCH, MESSAGES - done));
        await db.query('VACUUM ANALYZE messages, message_contents, deliveries');
      });
      const [sizes]: { contents: string; deliveries: string; messages: string }[] = await db.query(
        `SELECT pg_size_pretty(pg_total_relation_size('message_contents')) AS contents,
                pg_size_pretty(pg_total_relation_size('deliveries')) AS deliveries,
                pg_size_pretty(pg_total_relation_size('messages')) AS messages`,
      );
      console.log(`seeded ${MESSAGES} messages in ${(seedMs / 1000).toFixed(1)} s:`, sizes);

      const before: number[] = [];
      const after: number[] = [];
      let stored = MESSAGES;
      let redactions = 0;
      const redactOne = async () => {
        redactions += 1;
        await services.messageRepair.redactMessage(ctx, `wdm_seed0_${redactions}`);
      };
      for (let round = 0; round < ROUNDS; round += 1) {
        await churn(db, seeded, 2 * round, stored);
        stored += Math.floor(stored / 100);
        await redactOne();
        before.push(await vacuum(db, 'VACUUM (PROCESS_TOAST) message_contents, deliveries'));
        await churn(db, seeded, 2 * round + 1, stored);
        stored += Math.floor(stored / 100);
        await redactOne();
        after.push(
          await vacuum(
            db,
            'VACUUM (PROCESS_TOAST, INDEX_CLEANUP OFF, TRUNCATE OFF) messages, message_contents, deliveries',
          ),
        );
      }
      // A sweep that proves through the counts: note the redaction, two vacuums as autovacuum would run, then time.
      await redactOne();
      const sweeps: number[] = [];
      await services.retention.completeRedactions();
      for (let i = 0; i < 5; i += 1) sweeps.push(await timed(() => services.retention.completeRedactions()));
      await db.query('VACUUM messages, message_contents, deliveries');
      await db.query('VACUUM messages, message_contents, deliveries');
      const proved = await timed(async () => {
        const n = await services.retention.completeRedactions();
        if (n < 1) throw new Error('the counts did not prove the redaction');
      });

      const figures = {
        messages: stored,
        sizes,
        before_vacuum_ms: before,
        after_fallback_vacuum_ms: after,
        sweep_without_vacuum_ms: sweeps,
        sweep_proving_ms: proved,
        // While redactions keep arriving: the old sweep vacuumed on each 5-minute run; the new one at most once an
        // hour (none when autovacuum covers the tables).
        per_hour_before_ms: 12 * median(before),
        per_hour_after_worst_ms: median(after),
      };
      console.log('\nRedaction completion, ms (median of', ROUNDS, 'rounds)');
      console.table({
        'before: VACUUM message_contents, deliveries (each 5-minute run)': median(before),
        'after: fallback VACUUM, no index cleanup (at most once an hour)': median(after),
        'after: a sweep run that waits (counts only)': median(sweeps),
        'after: a sweep run that proves from the counts': proved,
        'per hour before (12 runs)': figures.per_hour_before_ms,
        'per hour after (worst: one fallback)': figures.per_hour_after_worst_ms,
      });
      mkdirSync('.tmp', { recursive: true });
      writeFileSync('.tmp/bench-redaction.json', JSON.stringify(figures, null, 2));
    } finally {
      await core.close();
    }
  } finally {
    await stop();
  }
}

await main();
