/**
 * `npx tsx scripts/bench-usage.ts`: where GET /meta/usage should read from (docs/usage.md, How usage is counted).
 *
 *   charge      charges per second through BillingService.charge (ledger rows + spend + the usage rollup, the code
 *               in use)  vs  the charge statement before the rollup, alone and with an index on charges (team_id,
 *               billing_month), which a report summing the ledger would need. 16 connections, one key each; three
 *               interleaved rounds, medians.
 *   admission   whole message admissions per second (16 teams at once, two endpoints each), for scale.
 *   report      one team's month report with LEDGER_ROWS ledger rows: UsageService.getUsage (rollup rows)  vs  summing
 *               the ledger with an index on (team_id, billing_month), and with a covering one (index-only scan).
 *
 * Prints a table and the figures as JSON. BENCH_SECONDS (default 5) per charge figure; LEDGER_ROWS (default
 * 1,000,000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  billingMonth,
  CreateEndpointInput,
  CreateEventTypeInput,
  CreateMessageInput,
  CreateTenantInput,
  newId,
  parseInput,
  RawJson,
  openCore,
  RATE_VERSION,
  systemClock,
  testCoreOptions,
  type ChargeItem,
} from '@svc/core';
import { ensureDatabase, runMigrations, startEmbeddedPostgres, type EntityManager } from '@svc/db';

const DURATION_MS = Number(process.env['BENCH_SECONDS'] ?? 5) * 1000;
const LEDGER_ROWS = Number(process.env['LEDGER_ROWS'] ?? 1_000_000);
const CONNECTIONS = 16;
const ROUNDS = 3;

/** A small message to two endpoints: 1 ingest unit and 2 delivery units, two ledger rows. */
const items = (): ChargeItem[] => {
  const resourceId = newId('message', systemClock);
  return [
    { meter: 'webhooks.ingest_64k', units: 1, resourceId },
    { meter: 'webhooks.delivery_16k', units: 2, resourceId },
  ];
};

/**
 * The charge statement as it was before the usage rollup (payer, spend, ledger rows), for the comparison: what a
 * report summing the ledger would leave the hot path with.
 */
async function chargeWithoutRollup(tx: EntityManager, teamId: string, keyId: string): Promise<void> {
  const rows = items();
  await tx.query(
    `WITH payer AS (
       SELECT t.has_payment_card AS card, k.spending_limit_micros AS lim
         FROM api_keys k JOIN teams t ON t.id = k.team_id WHERE k.id = $1),
     spend AS (
       INSERT INTO key_monthly_spend AS s (key_id, billing_month, spent_micros)
       SELECT $1, $2, $3::bigint FROM payer WHERE payer.card AND (payer.lim IS NULL OR $3::bigint <= payer.lim)
       ON CONFLICT (key_id, billing_month) DO UPDATE SET spent_micros = s.spent_micros + EXCLUDED.spent_micros
        WHERE NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id
                            AND k.spending_limit_micros < s.spent_micros + EXCLUDED.spent_micros)
       RETURNING 1),
     ledger AS (
       INSERT INTO charges (id, team_id, key_id, meter, units, amount_micros, rate_version, resource_id,
                            billing_month, created_at)
       SELECT c.id, $4, $1, c.meter, c.units, c.amount, $5, c.resource_id, $2, $6
         FROM unnest($7::text[], $8::text[], $9::int[], $10::bigint[], $11::text[])
              AS c(id, meter, units, amount, resource_id)
        WHERE EXISTS (SELECT 1 FROM spend)
       RETURNING 1)
     SELECT (SELECT card FROM payer) AS card, (SELECT count(*) FROM spend)::int AS charged,
            (SELECT count(*) FROM ledger)::int AS written`,
    [
      keyId,
      billingMonth(systemClock.now()),
      '110',
      teamId,
      RATE_VERSION,
      systemClock.now(),
      rows.map(() => newId('charge', systemClock)),
      rows.map((r) => r.meter),
      rows.map((r) => r.units),
      rows.map((r) => (r.meter === 'webhooks.ingest_64k' ? '10' : '100')),
      rows.map((r) => r.resourceId),
    ],
  );
}

async function chargesPerSecond(run: (connection: number) => Promise<void>): Promise<number> {
  let done = 0;
  const until = performance.now() + DURATION_MS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, connection) => {
      while (performance.now() < until) {
        await run(connection);
        done += 1;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function medianMs(times: number, run: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  await run();
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-usage-'));
  const cluster = await startEmbeddedPostgres({ dataDir, persistent: false });
  const databaseUrl = cluster.url.replace(/\/postgres$/, '/bench_usage');
  const figures: Record<string, number> = {};
  try {
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    const core = await openCore(testCoreOptions(databaseUrl, systemClock, { poolSize: CONNECTIONS + 4 }));
    const { services } = core;
    try {
      const team = await services.teams.createTeam('bench');
      const keys = await Promise.all(
        Array.from({ length: CONNECTIONS }, () => services.teams.createKey(team.id).then((k) => k.keyId)),
      );
      const payer = (connection: number) => ({ teamId: team.id, keyId: keys[connection]! });

      // Interleaved rounds, medians: the machine may be busy with other work, and no variant runs only on the
      // bigger tables.
      const withRollup = () =>
        chargesPerSecond((c) =>
          services.db.transaction((tx) => services.billing.charge(tx, payer(c), items())).then(() => undefined),
        );
      const withoutRollup = () =>
        chargesPerSecond((c) => services.db.transaction((tx) => chargeWithoutRollup(tx, team.id, keys[c]!)));
      const withLedgerIndex = async () => {
        await services.db.query('CREATE INDEX bench_charges_team_month_idx ON charges (team_id, billing_month)');
        const rate = await withoutRollup();
        await services.db.query('DROP INDEX bench_charges_team_month_idx');
        return rate;
      };
      const rates = { rollup: [] as number[], plain: [] as number[], ledger: [] as number[] };
      for (let round = 0; round < ROUNDS; round += 1) {
        rates.plain.push(await withoutRollup());
        rates.rollup.push(await withRollup());
        rates.ledger.push(await withLedgerIndex());
      }
      const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
      figures['charge_plain_per_s'] = median(rates.plain);
      figures['charge_with_rollup_per_s'] = median(rates.rollup);
      figures['charge_ledger_index_per_s'] = median(rates.ledger);
      await services.db.query('CREATE INDEX bench_charges_team_month_idx ON charges (team_id, billing_month)');

      // Whole admissions (message, content, two deliveries, jobs, charge) from 16 teams at once, to size the rollup's
      // cost against the work it rides on.
      const senders = await Promise.all(
        Array.from({ length: CONNECTIONS }, async (_, i) => {
          const sender = await services.teams.createTeam(`admit-${i}`);
          const key = await services.teams.createKey(sender.id);
          const ctx = { actor: { teamId: sender.id, keyId: key.keyId } };
          const tenant = await services.tenants.createTenant(
            ctx,
            parseInput(CreateTenantInput, { external_id: 'bench', name: 'Bench' }),
          );
          await services.eventTypes.createEventType(ctx, parseInput(CreateEventTypeInput, { name: 'bench.event' }));
          for (const url of ['https://example.com/a', 'https://example.com/b'])
            await services.endpoints.createEndpoint(
              ctx,
              parseInput(CreateEndpointInput, { tenant_id: tenant.id, url }),
            );
          return { ctx, tenantId: tenant.id };
        }),
      );
      figures['admissions_per_s'] = await chargesPerSecond(async (c) => {
        const { ctx, tenantId } = senders[c]!;
        const input = parseInput(CreateMessageInput, {
          tenant_id: tenantId,
          event_type: 'bench.event',
          payload: new RawJson('{"n":1}'),
        });
        await services.messages.admitMessage(ctx, input, { origin: 'api' });
      });

      // A busy month: LEDGER_ROWS rows of one team over 4 keys and 2 meters, with the rollup they add up to.
      const month = billingMonth(systemClock.now());
      const report = await services.teams.createTeam('report');
      const reportKeys = await Promise.all(
        [0, 1, 2, 3].map(() => services.teams.createKey(report.id).then((k) => k.keyId)),
      );
      // In batches: one statement of a million rows would outlast the pool's statement timeout.
      for (let from = 1; from <= LEDGER_ROWS; from += 100_000)
        await services.db.query(
          `INSERT INTO charges (id, team_id, key_id, meter, units, amount_micros, rate_version, resource_id,
                                billing_month, created_at)
           SELECT 'chg_bench' || i, $1, ($2::text[])[1 + i % 4],
                  CASE WHEN i % 2 = 0 THEN 'webhooks.ingest_64k' ELSE 'webhooks.delivery_16k' END,
                  1 + i % 3, CASE WHEN i % 2 = 0 THEN 10 ELSE 50 END * (1 + i % 3), $3, 'wdm_bench' || i / 2, $4,
                  now()
             FROM generate_series($5::int, $6::int) AS i`,
          [report.id, reportKeys, RATE_VERSION, month, from, Math.min(LEDGER_ROWS, from + 99_999)],
        );
      await services.db.query(
        `INSERT INTO key_monthly_meter_usage (key_id, billing_month, meter, rate_version, units, amount_micros,
                                              charge_rows)
         SELECT key_id, billing_month, meter, rate_version, sum(units), sum(amount_micros), count(*)
           FROM charges WHERE team_id = $1 GROUP BY 1, 2, 3, 4`,
        [report.id],
      );
      await services.db.query('VACUUM ANALYZE charges');
      await services.db.query('VACUUM ANALYZE key_monthly_meter_usage');
      const ctx = { actor: { teamId: report.id, keyId: reportKeys[0]! } };
      const sumLedger = () =>
        services.db.query(
          `SELECT key_id, meter, rate_version, sum(units), sum(amount_micros) FROM charges
            WHERE team_id = $1 AND billing_month = $2 GROUP BY 1, 2, 3`,
          [report.id, month],
        );
      figures['report_rollup_ms'] = await medianMs(20, () => services.usage.getUsage(ctx, {}));
      figures['report_ledger_index_ms'] = await medianMs(5, sumLedger);
      await services.db.query(
        `CREATE INDEX bench_charges_covering_idx ON charges (team_id, billing_month)
           INCLUDE (key_id, meter, rate_version, units, amount_micros)`,
      );
      await services.db.query('VACUUM ANALYZE charges');
      figures['report_ledger_covering_ms'] = await medianMs(5, sumLedger);
    } finally {
      await core.close();
    }
  } finally {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const rows = [
    ['charges/s, payer + spend + ledger (before the rollup)', figures['charge_plain_per_s']!.toFixed(0)],
    ['charges/s, payer + spend + ledger + usage rollup (in use)', figures['charge_with_rollup_per_s']!.toFixed(0)],
    [
      'charges/s, payer + spend + ledger + (team_id, billing_month) index',
      figures['charge_ledger_index_per_s']!.toFixed(0),
    ],
    ['admissions/s (2 endpoints each, rollup in use)', figures['admissions_per_s']!.toFixed(0)],
    [`report ms, rollup (${LEDGER_ROWS.toLocaleString('en')} ledger rows)`, figures['report_rollup_ms']!.toFixed(2)],
    ['report ms, sum of the ledger, (team_id, billing_month) index', figures['report_ledger_index_ms']!.toFixed(1)],
    ['report ms, sum of the ledger, covering index', figures['report_ledger_covering_ms']!.toFixed(1)],
  ];
  for (const [name, value] of rows) console.log(`${name!.padEnd(68)} ${value!.padStart(10)}`);
  console.log(JSON.stringify({ ledger_rows: LEDGER_ROWS, seconds: DURATION_MS / 1000, ...figures }));
}

await main();
