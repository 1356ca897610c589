import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { openCore, type OpenedCore } from '../boot.js';
import { testCoreOptions } from '../testing/core-options.js';
import { ManualClock } from './clock.js';

let core: OpenedCore;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  core = await openCore(testCoreOptions(database.url, new ManualClock()));
});
afterAll(async () => {
  await core.close();
  await drop();
});

const SETTINGS = `SELECT current_setting('statement_timeout') AS statement,
                          current_setting('lock_timeout') AS lock,
                          current_setting('idle_in_transaction_session_timeout') AS idle`;
const EXPECTED = { statement: '30s', lock: '10s', idle: '1min' };

describe('session timeouts', () => {
  it('the services pool and the job queue pool both end stuck statements, lock waits and idle transactions', async () => {
    expect((await core.services.db.query(SETTINGS))[0]).toEqual(EXPECTED);
    const viaJobs: { rows: unknown[] } = await core.jobQueue.boss.getDb().executeSql(SETTINGS, []);
    expect(viaJobs.rows[0]).toEqual(EXPECTED);
  });
});
