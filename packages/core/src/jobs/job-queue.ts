import PgBoss from 'pg-boss';
import type { EntityManager } from 'typeorm';
import { ADVISORY_LOCKS, poolConfig, withAdvisoryLock } from '@svc/db';
import type { Clock } from '../common/clock.js';
import type { JobContract } from './job-contract.js';

export interface NewJob<P> {
  payload: P;
  /** Not before this time of the service clock. */
  startAfter?: Date;
  /** A stable ID makes a resend of the same job a no-op. */
  id?: string;
}

/**
 * The job-queue port: jobs are sent inside the caller's transaction, so they exist exactly when the work that
 * needs them commits ("nothing is stored that is not scheduled").
 */
export interface JobQueue {
  send<P>(tx: EntityManager, contract: JobContract<P>, jobs: readonly NewJob<P>[]): Promise<void>;
}

/** The schema pg-boss keeps its tables in. */
export const JOB_SCHEMA = 'pgboss';

/**
 * pg-boss behind the port. Every process opens one (it creates pg-boss's schema and the contracts' queues once);
 * the worker also uses `boss` to fetch and complete. Sends go through pg-boss `insert` with the caller's
 * transaction as its `db`, so they cost one round trip for any number of jobs.
 */
export class PgBossJobQueue implements JobQueue {
  readonly boss: PgBoss;

  private constructor(
    boss: PgBoss,
    private readonly clock: Clock,
  ) {
    this.boss = boss;
  }

  static async open(
    databaseUrl: string,
    clock: Clock,
    contracts: readonly JobContract<unknown>[],
    options: { max?: number } = {},
  ): Promise<PgBossJobQueue> {
    const boss = new PgBoss({
      ...poolConfig(databaseUrl, options.max ?? 2),
      schema: JOB_SCHEMA,
      // The worker runs maintenance and its own fetch loop; other processes only send.
      supervise: false,
      schedule: false,
    });
    boss.on('error', () => undefined);
    await boss.start();
    await ensureQueues(boss, databaseUrl, contracts);
    return new PgBossJobQueue(boss, clock);
  }

  async send<P>(tx: EntityManager, contract: JobContract<P>, jobs: readonly NewJob<P>[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.clock.now().getTime();
    await this.boss.insert(
      jobs.map((job) => ({
        ...(job.id ? { id: job.id } : {}),
        name: contract.queue,
        data: { ...(job.payload as object), v: contract.version },
        // Relative to the service clock: pg-boss compares start_after with the database's now().
        ...(job.startAfter ? { startAfter: String(Math.max(0, (job.startAfter.getTime() - now) / 1000)) } : {}),
      })) as PgBoss.JobInsert[],
      { db: { executeSql: async (text: string, values: unknown[]) => ({ rows: await tx.query(text, values) }) } },
    );
  }

  stop(): Promise<void> {
    return this.boss.stop({ graceful: false, wait: true, close: true });
  }
}

/** The most automatic retries any job gets: a job that keeps failing gives up within minutes, never loops. */
export const MAX_JOB_RETRIES = 10;

/**
 * A job that fails is retried a bounded number of times with a growing delay (5 s, 10 s, 20 s, ... by default, each
 * with up to as much again of jitter), never at once in a loop.
 */
export function queueRetryPolicy(contract: JobContract<unknown>): {
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
} {
  const retryLimit = contract.retryLimit ?? 2;
  if (!Number.isInteger(retryLimit) || retryLimit < 0 || retryLimit > MAX_JOB_RETRIES)
    throw new Error(`${contract.queue}: retryLimit must be 0 to ${MAX_JOB_RETRIES}`);
  return { retryLimit, retryDelay: Math.max(1, contract.retryDelaySeconds ?? 5), retryBackoff: true };
}

/**
 * Creates the contracts' queues that do not exist yet, and brings every one to its contract's retry policy:
 * pg-boss's createQueue leaves a queue that exists as it was, so a changed retry bound would otherwise never reach
 * installations made before it. Only the retry policy is brought (pg-boss's updateQueue leaves what it is not
 * given): a queue's expiry stays as its installation set it (the fault tests shorten it so a killed worker's job comes
 * back in seconds, and a process starting meanwhile must not put it back).
 *
 * Creation runs under a session advisory lock on a connection of its own: pg-boss 10 creates a queue as a table that
 * it attaches to its partitioned job table, with foreign keys to its queue table, and two processes doing that at
 * once for different queues deadlock (a server and a worker starting together on a new database did). A process
 * whose queues all exist takes no lock.
 */
export async function ensureQueues(
  boss: PgBoss,
  databaseUrl: string,
  contracts: readonly JobContract<unknown>[],
): Promise<void> {
  const existing = new Set((await boss.getQueues()).map((queue) => queue.name));
  const missing = contracts.filter((contract) => !existing.has(contract.queue));
  if (missing.length > 0)
    await withAdvisoryLock(databaseUrl, ADVISORY_LOCKS.jobQueues, async () => {
      // Idempotent: a queue another process made while this one waited for the lock is left as it is.
      for (const contract of missing)
        await boss.createQueue(contract.queue, {
          name: contract.queue,
          ...queueRetryPolicy(contract),
          ...(contract.expireInSeconds ? { expireInSeconds: contract.expireInSeconds } : {}),
        });
    });
  for (const contract of contracts)
    await boss.updateQueue(contract.queue, { name: contract.queue, ...queueRetryPolicy(contract) });
}
