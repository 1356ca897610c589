import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { ManualClock } from '../common/clock.js';
import { replayBatchJob } from '../deliveries/replay.jobs.js';
import { JOB_CONTRACTS } from './contracts.js';
import { JOB_SCHEMA, MAX_JOB_RETRIES, PgBossJobQueue, queueRetryPolicy } from './job-queue.js';

describe('job retry policies', () => {
  it('every job retries a bounded number of times, with a growing delay', () => {
    for (const contract of JOB_CONTRACTS) {
      const policy = queueRetryPolicy(contract);
      expect(policy.retryLimit, contract.queue).toBeLessThanOrEqual(MAX_JOB_RETRIES);
      expect(policy.retryBackoff, contract.queue).toBe(true);
      expect(policy.retryDelay, contract.queue).toBeGreaterThanOrEqual(1);
    }
  });

  it('refuses a contract without a bound', () => {
    expect(() => queueRetryPolicy({ ...replayBatchJob, retryLimit: 1000 })).toThrow(/retryLimit must be 0 to 10/);
  });

  describe('on Postgres', () => {
    let database: { url: string; drop(): Promise<void> };
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(async () => {
      await database.drop();
    });

    it('is opened by processes starting at once on a new database: every queue made once, no deadlock', async () => {
      // pg-boss 10 makes each queue a partition of its job table; made by several processes at once it deadlocked
      // (every round of four failed here before queue creation took a lock).
      const fresh = await createTestDatabase();
      try {
        const clock = new ManualClock('2026-11-25T00:00:00Z');
        const opened = await Promise.allSettled(
          Array.from({ length: 4 }, () => PgBossJobQueue.open(fresh.url, clock, JOB_CONTRACTS)),
        );
        for (const result of opened) if (result.status === 'fulfilled') await result.value.stop();
        expect(opened.map((result) => (result.status === 'rejected' ? String(result.reason) : 'opened'))).toEqual(
          Array(4).fill('opened'),
        );
        const client = new pg.Client({ connectionString: fresh.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${JOB_SCHEMA}.queue ORDER BY name`);
          expect(rows.map((row) => row.name)).toEqual(JOB_CONTRACTS.map((contract) => contract.queue).sort());
        } finally {
          await client.end();
        }
      } finally {
        await fresh.drop();
      }
    }, 60_000);

    it('brings a queue created under an older policy (1,000 retries, no delay) to the contract', async () => {
      const clock = new ManualClock('2026-11-25T00:00:00Z');
      const first = await PgBossJobQueue.open(database.url, clock, [replayBatchJob]);
      await first.stop();
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query(
          `UPDATE ${JOB_SCHEMA}.queue SET retry_limit = 1000, retry_delay = 0, retry_backoff = false WHERE name = $1`,
          [replayBatchJob.queue],
        );
        const again = await PgBossJobQueue.open(database.url, clock, [replayBatchJob]);
        await again.stop();
        const { rows } = await client.query(
          `SELECT retry_limit, retry_delay, retry_backoff FROM ${JOB_SCHEMA}.queue WHERE name = $1`,
          [replayBatchJob.queue],
        );
        expect(rows[0]).toEqual({ retry_limit: 4, retry_delay: 5, retry_backoff: true });
      } finally {
        await client.end();
      }
    });
  });
});
