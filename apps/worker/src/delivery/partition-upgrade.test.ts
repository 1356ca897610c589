import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, limitsWith, openCore, seedDay, systemClock, testCoreOptions, utcDay, type Services } from '@svc/core';
import { loadMigrations, runMigrations } from '@svc/db';
import { buildApp, type BuiltApp } from '../../../server/src/app.js';
import { readServerConfig } from '../../../server/src/config.js';
import { startWorker, type RunningWorker } from '../worker.js';

/**
 * The upgrade to daily partitions (migration 0041) on a database with data, while the service delivers: a server and
 * a worker on the real clock, publishers posting without pause, and 100,000 stored messages over four days (400,000
 * rows with their contents, deliveries and attempts). Every publish is accepted, every message delivered, and no
 * statement waits a second for a lock (sampled from pg_locks.waitstart every 10 ms while the migration runs).
 */
const SEEDED_DAYS = 4;
const PER_DAY = 25_000;
const PUBLISHERS = 4;

const admin = () => new pg.Client({ connectionString: process.env['SVC_TEST_DATABASE_URL'] });
const name = `upgrade_${randomBytes(5).toString('hex')}`;
let url: string;
let close: () => Promise<void> = async () => undefined;
let services: Services;
let built: BuiltApp;
let worker: RunningWorker;
let baseUrl: string;
let key: string;
const received = new Set<number>();
const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const seq = /"seq":(\d+)/.exec(Buffer.concat(chunks).toString('utf8'));
    if (seq) received.add(Number(seq[1]));
    response.writeHead(200).end('ok');
  });
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: { id: string } }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': `upgrade-${randomBytes(8).toString('hex')}`,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  const client = admin();
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const base = new URL(process.env['SVC_TEST_DATABASE_URL']!);
  base.pathname = `/${name}`;
  url = base.toString();
  await runMigrations(
    url,
    loadMigrations().filter((m) => m.id < '0041'),
  );
  // The publishers post without pause: on a fast machine four of them pass the team's admission rate (100 a second),
  // whose 429s are not what this test is about.
  const limits = limitsWith({ service_concurrency: 20, admission_rate: 100_000 });
  const core = await openCore(testCoreOptions(url, systemClock, { limits, poolSize: 8 }));
  services = core.services;
  const config = { ...readServerConfig({ PORT: '0', LOG_LEVEL: 'silent' }, 'local'), limits };
  built = await buildApp(services, config, pino({ level: 'silent' }));
  baseUrl = `${await built.app.listen({ port: 0, host: '127.0.0.1' })}/v1`;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  close = async () => {
    await worker?.stop();
    await built.app.close();
    await core.close();
    await new Promise((resolve) => receiver.close(resolve));
    const c = admin();
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
}, 60_000);
afterAll(async () => {
  await close();
});

describe('the upgrade to daily partitions', () => {
  it('runs on a filled database while the service delivers: nothing fails, nothing is lost, no lock wait of 1 s', async () => {
    const team = await services.teams.createTeam('upgrade');
    const issued = await services.teams.createKey(team.id);
    key = issued.secret;
    const keyId = issued.keyId;

    await services.teams.setPaymentCard(team.id, true);
    expect((await call('POST', '/event_types', { name: 'order.created' })).status).toBe(201);
    const tenant = await call('POST', '/tenants', { external_id: 'upgrade', name: 'Upgrade' });
    const port = (receiver.address() as AddressInfo).port;
    const endpoint = await call('POST', '/endpoints', {
      tenant_id: tenant.json.id,
      url: `http://127.0.0.1:${port}/in`,
    });
    expect(endpoint.status).toBe(201);
    const target = { teamId: team.id, keyId, tenantId: tenant.json.id, endpointId: endpoint.json.id };
    const today = utcDay(new Date());
    for (let d = SEEDED_DAYS; d >= 1; d -= 1)
      await seedDay(services.db, target, new Date(today.getTime() - d * DAY), { messages: PER_DAY });
    await services.db.query('VACUUM ANALYZE messages, message_contents, deliveries, attempts');

    worker = await startWorker({
      databaseUrl: url,
      services,
      logger: pino({ level: 'silent' }),
      maxIdleMs: 100,
    });
    let seq = 0;
    let publishing = true;
    const failures: string[] = [];
    const publisher = async () => {
      while (publishing) {
        seq += 1;
        const n = seq;
        const r = await call('POST', '/messages', {
          tenant_id: tenant.json.id,
          event_type: 'order.created',
          payload: { seq: n },
        });
        if (r.status !== 202) failures.push(`${n}: ${r.status} ${JSON.stringify(r.json)}`);
      }
    };
    const publishers = Array.from({ length: PUBLISHERS }, publisher);

    // The longest lock wait of any backend of this database while the migration runs. pg_locks shows the whole
    // cluster: without the database, another file's test that holds a lock on purpose counted here (usage.test.ts
    // holds a month's close lock for the 2 s lock timeout: "expected 1989 to be less than 1000" in a whole run).
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    let longestWaitMs = 0;
    let longestServiceWaitMs = 0;
    /** Who waited longest, and for what lock (printed when the bound is passed). */
    let longestWaiter = '';
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const rows = await watcher.query(
          `SELECT coalesce(max(extract(epoch FROM clock_timestamp() - l.waitstart)) * 1000, 0)::float8 AS ms,
                  coalesce(max(extract(epoch FROM clock_timestamp() - l.waitstart))
                             FILTER (WHERE a.query NOT LIKE '%time_partitioning%') * 1000, 0)::float8 AS service_ms,
                  (array_agg(l.mode || ' on ' || coalesce(l.relation::regclass::text, l.locktype) || ' by ' ||
                             coalesce(a.backend_type, '') || ': ' || left(a.query, 160)
                             ORDER BY l.waitstart))[1] AS waiter
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE NOT l.granted AND l.waitstart IS NOT NULL AND a.datname = current_database()`,
        );
        if (rows.rows[0].ms > longestWaitMs) longestWaiter = rows.rows[0].waiter ?? '';
        longestWaitMs = Math.max(longestWaitMs, rows.rows[0].ms);
        longestServiceWaitMs = Math.max(longestServiceWaitMs, rows.rows[0].service_ms);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const publishedBefore = seq;
    const started = Date.now();
    const applied = await runMigrations(url);
    const migrationMs = Date.now() - started;
    const publishedDuring = seq - publishedBefore;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    publishing = false;
    await Promise.all(publishers);
    watching = false;
    await watch;
    await watcher.end();

    expect(applied).toContain('0041_time_partitions');
    expect(failures).toEqual([]);
    expect(publishedDuring).toBeGreaterThan(0);
    const deadline = Date.now() + 30_000;
    while (received.size < seq && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received.size).toBe(seq);
    expect(longestWaitMs, longestWaiter).toBeLessThan(1_000);
    expect(longestServiceWaitMs).toBeLessThan(1_000);

    const kinds = await services.db.query(
      `SELECT relname, relkind FROM pg_class WHERE relname IN ('messages', 'message_contents', 'deliveries', 'attempts')
        ORDER BY relname`,
    );
    expect(kinds.map((k: { relkind: string }) => k.relkind)).toEqual(['p', 'p', 'p', 'p']);
    const stored = await services.db.query(`SELECT count(*)::int AS n FROM messages`);
    expect(stored[0].n).toBe(SEEDED_DAYS * PER_DAY + seq);
    const attempts = await services.db.query(`SELECT count(*)::int AS n FROM attempts`);
    expect(attempts[0].n).toBeGreaterThanOrEqual(SEEDED_DAYS * PER_DAY + seq);
    console.warn(
      `upgrade: ${SEEDED_DAYS * PER_DAY * 4} rows, migration ${migrationMs} ms, ${publishedDuring} published during it, ` +
        `longest lock wait ${longestWaitMs.toFixed(0)} ms (a statement of the service: ${longestServiceWaitMs.toFixed(0)} ms)`,
    );
  }, 90_000);
});
