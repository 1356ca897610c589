import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import {
  DAY,
  ManualClock,
  openCore,
  purgeExpiredJob,
  requestFingerprint,
  testCoreOptions,
  type Actor,
  type Services,
} from '@svc/core';
import { startWorker, type RunningWorker } from './worker.js';

let services: Services;
let worker: RunningWorker;
let close: () => Promise<void>;
let drop: () => Promise<void>;
const clock = new ManualClock();

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  const core = await openCore(testCoreOptions(database.url, clock));
  services = core.services;
  close = core.close;
  worker = await startWorker({
    databaseUrl: database.url,
    services,
    logger: pino({ level: 'silent' }),
    maxIdleMs: 200,
  });
});
afterAll(async () => {
  await worker.stop();
  await close();
  await drop();
});

async function record(actor: Actor, key: string): Promise<void> {
  await services.idempotency.runOnce(actor, key, requestFingerprint('op', {}, {}), async () => ({
    response: { status: 200, headers: {}, body: null },
    value: null,
  }));
}

describe('worker', () => {
  it('runs a queued maintenance job from Postgres: expired idempotency records are purged', async () => {
    const team = await services.teams.createTeam('w');
    const actor = { teamId: team.id, keyId: 'key_x' };
    await record(actor, 'old');
    clock.advance(36 * DAY);
    await record(actor, 'new');
    await worker.boss.send(purgeExpiredJob.queue, { v: purgeExpiredJob.version });
    worker.notify();
    const deadline = Date.now() + 10_000;
    let keys: string[] = [];
    while (Date.now() < deadline) {
      keys = (await services.db.query('SELECT idempotency_key FROM idempotency_records ORDER BY 1')).map(
        (r: { idempotency_key: string }) => r.idempotency_key,
      );
      if (keys.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(keys).toEqual(['new']);
  });
});
