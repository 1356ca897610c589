import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Services } from '@svc/core';
import type { JobDefinition } from './jobs/job.js';
import { purgeExpiredJob } from './jobs/purge-expired.job.js';

export const JOBS: readonly JobDefinition<unknown>[] = [purgeExpiredJob as JobDefinition<unknown>];

export interface WorkerOptions {
  databaseUrl: string;
  services: Services;
  logger: Logger;
  batchSize?: number;
  /** Longest sleep between polls when queues are empty. */
  maxIdleMs?: number;
}

export interface RunningWorker {
  boss: PgBoss;
  /** Wakes the loop at once (work was published in this process). */
  notify(): void;
  stop(): Promise<void>;
}

/**
 * The worker runs its own fetch loop instead of pg-boss work() polling: it fetches in batches, fetches again at
 * once while batches come back full, backs off when queues are empty, and can be woken by notify().
 */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { services, logger } = options;
  const batchSize = options.batchSize ?? 20;
  const maxIdleMs = options.maxIdleMs ?? 2000;
  const boss = new PgBoss({ connectionString: options.databaseUrl, schema: 'pgboss', max: 4 });
  boss.on('error', (error) => logger.error({ err: error }, 'pg-boss error'));
  await boss.start();
  for (const job of JOBS) {
    await boss.createQueue(job.id);
    if (job.cron) await boss.schedule(job.id, job.cron, {}, { tz: 'UTC' });
  }

  let stopping = false;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });

  async function runOnce(): Promise<number> {
    let handled = 0;
    for (const job of JOBS) {
      const fetched = await boss.fetch<unknown>(job.id, { batchSize });
      for (const item of fetched) {
        handled += 1;
        try {
          await job.run(job.payload.parse(item.data), services);
          await boss.complete(job.id, item.id);
        } catch (error) {
          logger.error({ err: error, job: job.id, jobId: item.id }, 'job failed');
          await boss.fail(job.id, item.id, { message: (error as Error).message });
        }
      }
    }
    return handled;
  }

  const loop = (async () => {
    let idleMs = 50;
    while (!stopping) {
      try {
        const handled = await runOnce();
        if (handled >= batchSize) continue;
        idleMs = handled > 0 ? 50 : Math.min(maxIdleMs, idleMs * 2);
      } catch (error) {
        if (stopping) break;
        logger.error({ err: error }, 'worker loop error');
        idleMs = maxIdleMs;
      }
      if (!stopping) await sleep(idleMs);
    }
  })();

  return {
    boss,
    notify: () => wake?.(),
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      await boss.stop({ graceful: true, wait: true, timeout: 5000 });
    },
  };
}
