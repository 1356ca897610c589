import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import { DELIVERY_WAKE_CHANNEL, ensureQueues, JOB_SCHEMA, parseWakePayload, type Services } from '@svc/core';
import { poolConfig } from '@svc/db';
import { createDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from './engine/engine.js';
import type { JobHandler } from './jobs/job.js';
import { listenForWake } from './wake-listener.js';
import { purgeExpiredHandler } from './jobs/purge-expired.job.js';
import { analyticsRollupHandler } from './jobs/analytics-rollup.job.js';
import { closeBillingMonthsHandler } from './jobs/close-billing-months.job.js';
import { replayBatchHandler } from './jobs/replay-batch.job.js';
import { replayCheckHandler } from './jobs/replay-check.job.js';
import { subscriptionSweepHandler } from './jobs/subscription-sweep.job.js';
import { deliveryReconcileHandler } from './jobs/delivery-reconcile.job.js';

/** The shortest time between two fetches of one queue that did not come back full. */
const MIN_FETCH_GAP_MS = 5;

export const JOBS: readonly JobHandler<unknown>[] = [
  purgeExpiredHandler as JobHandler<unknown>,
  analyticsRollupHandler as JobHandler<unknown>,
  closeBillingMonthsHandler as JobHandler<unknown>,
  replayBatchHandler as JobHandler<unknown>,
  replayCheckHandler as JobHandler<unknown>,
  subscriptionSweepHandler as JobHandler<unknown>,
  deliveryReconcileHandler as JobHandler<unknown>,
];

export interface WorkerOptions {
  databaseUrl: string;
  services: Services;
  logger: Logger;
  /** Most jobs fetched in one round trip. */
  batchSize?: number;
  /** Most jobs running at once in this process, across all queues. */
  concurrency?: number;
  /** Longest sleep between polls of an empty queue. */
  maxIdleMs?: number;
  /** Only these handlers (tests); default: maintenance jobs and the delivery engine. */
  handlers?: readonly JobHandler<unknown>[];
  /** Shown in the User-Agent of deliveries. */
  docsUrl?: string;
  /** Run the webhook delivery engine (default: when `handlers` is not given). */
  deliveries?: boolean;
  /** Tests: the egress client's extra certificate authority and name table (DeliveryEngineOptions.egress). */
  egress?: DeliveryEngineOptions['egress'];
  /**
   * Schedule the periodic jobs (default true). Tests that run the maintenance themselves, on a clock they move,
   * turn it off: a scheduled run between their steps would do their step first.
   */
  schedules?: boolean;
}

export interface RunningWorker {
  boss: PgBoss;
  /** This process's ID in dispatch_workers. */
  workerId: string;
  /** Webhook delivery attempts running in this process. */
  readonly inFlight: number;
  /** Wakes every queue's loop at once (work was published in this process). */
  notify(): void;
  stop(): Promise<void>;
}

/** Counts running jobs against a process-wide cap and per-queue caps; wakes waiters when a slot frees. */
class JobPool {
  private running = 0;
  private readonly perQueue = new Map<string, number>();
  private waiters: (() => void)[] = [];

  constructor(private readonly capacity: number) {}

  free(queue: string, queueCap: number): number {
    return Math.max(0, Math.min(this.capacity - this.running, queueCap - (this.perQueue.get(queue) ?? 0)));
  }

  get active(): number {
    return this.running;
  }

  start(queue: string): void {
    this.running += 1;
    this.perQueue.set(queue, (this.perQueue.get(queue) ?? 0) + 1);
  }

  finish(queue: string): void {
    this.running -= 1;
    this.perQueue.set(queue, (this.perQueue.get(queue) ?? 1) - 1);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  slotFreed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  drained(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : this.slotFreed().then(() => this.drained());
  }
}

/** Completions are settled in batches: one round trip per queue per tick instead of one per job. */
class CompletionBatcher {
  private readonly pending = new Map<string, string[]>();
  private scheduled: Promise<void> | null = null;

  constructor(
    private readonly boss: PgBoss,
    private readonly logger: Logger,
  ) {}

  complete(queue: string, id: string): void {
    const ids = this.pending.get(queue) ?? [];
    ids.push(id);
    this.pending.set(queue, ids);
    this.scheduled ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  async flush(): Promise<void> {
    this.scheduled = null;
    const batches = [...this.pending];
    this.pending.clear();
    for (const [queue, ids] of batches) {
      try {
        await this.boss.complete(queue, ids);
      } catch (error) {
        // The jobs expire and run again: handlers are idempotent.
        this.logger.error({ err: error, queue, jobs: ids.length }, 'completing jobs failed');
      }
    }
  }
}

/**
 * The worker runs its own fetch loop per queue instead of pg-boss work() polling: it fetches as many jobs as the
 * bounded pool has room for, fetches again at once while batches come back full, backs off when a queue is
 * empty, and wakes on notify(). Jobs run concurrently in the pool; completions are batched.
 */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { services, logger } = options;
  const workerId = `wkr_${randomBytes(10).toString('hex')}`;
  let engine: DeliveryEngine | null = null;
  if (options.deliveries ?? !options.handlers) {
    engine = createDeliveryEngine(services, {
      docsUrl: options.docsUrl ?? 'http://localhost:8080/v1',
      workerId,
      logger,
      ...(options.egress ? { egress: options.egress } : {}),
    });
  }
  const handlers = options.handlers ?? [...JOBS, engine!.subscriptionHandler as JobHandler<unknown>];
  const batchSize = options.batchSize ?? 50;
  const maxIdleMs = options.maxIdleMs ?? 2000;
  const boss = new PgBoss({
    ...poolConfig(options.databaseUrl, 4),
    schema: JOB_SCHEMA,
    // Maintenance hands an expired job (its worker died mid-attempt) out again; every 30 s instead of pg-boss's
    // 2 minutes bounds how long a crash delays its deliveries.
    maintenanceIntervalSeconds: 30,
  });
  boss.on('error', (error) => logger.error({ err: error }, 'pg-boss error'));
  await boss.start();
  // Today's partitions and the week's ahead before the first scheduled maintenance (an insert beyond them would land
  // in the DEFAULT partition, never fail: this only spares the move).
  await services.partitions
    .makeAhead()
    .catch((error: unknown) => logger.error({ err: error }, 'making partitions ahead failed'));
  await ensureQueues(
    boss,
    options.databaseUrl,
    handlers.map((handler) => handler.contract),
  );
  for (const { contract } of handlers) {
    if (contract.cron && options.schedules !== false)
      await boss.schedule(contract.queue, contract.cron, { v: contract.version }, { tz: 'UTC' });
  }

  const pool = new JobPool(options.concurrency ?? 600);
  services.metrics.poolCapacity.set(options.concurrency ?? 600);
  const completions = new CompletionBatcher(boss, logger);
  let stopping = false;
  const wakers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      wakers.add(wake);
    });

  async function execute(handler: JobHandler<unknown>, job: PgBoss.JobWithMetadata<unknown>): Promise<void> {
    const { contract } = handler;
    let payload: unknown;
    try {
      const data = job.data as { v?: unknown } | null;
      if (data?.v !== undefined && data.v !== contract.version)
        throw new Error(`job version ${String(data.v)} is not ${contract.version}`);
      payload = contract.payload.parse(data ?? {});
      await handler.run(payload, services);
      completions.complete(contract.queue, job.id);
    } catch (error) {
      logger.error({ err: error, queue: contract.queue, jobId: job.id }, 'job failed');
      await boss.fail(contract.queue, job.id, { message: (error as Error).message }).catch(() => undefined);
      if (job.retryCount >= job.retryLimit) await giveUp(handler, job, payload, error);
    } finally {
      pool.finish(contract.queue);
      services.metrics.poolInUse.set(pool.active);
    }
  }

  /** The job failed on its last allowed try: pg-boss keeps it as failed; the handler makes the failure visible. */
  async function giveUp(
    handler: JobHandler<unknown>,
    job: PgBoss.JobWithMetadata<unknown>,
    payload: unknown,
    error: unknown,
  ): Promise<void> {
    const { queue } = handler.contract;
    services.metrics.jobsGivenUp.inc({ queue });
    logger.error({ err: error, queue, jobId: job.id, tries: job.retryCount + 1 }, 'job gave up');
    if (payload === undefined || !handler.giveUp) return;
    try {
      await handler.giveUp(payload, services);
    } catch (failure) {
      logger.error({ err: failure, queue, jobId: job.id }, 'recording a job that gave up failed');
    }
  }

  async function queueLoop(handler: JobHandler<unknown>): Promise<void> {
    const queue = handler.contract.queue;
    let idleMs = MIN_FETCH_GAP_MS;
    let lastFetch = 0;
    while (!stopping) {
      // A wake-up (one per admitted message under load) never fetches sooner than the gap after the last fetch,
      // so jobs accumulate into batches instead of one fetch per job.
      const gap = lastFetch + MIN_FETCH_GAP_MS - Date.now();
      if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
      const free = pool.free(queue, handler.concurrency);
      if (free === 0) {
        await pool.slotFreed();
        continue;
      }
      const wanted = Math.min(free, batchSize);
      let jobs: PgBoss.JobWithMetadata<unknown>[] = [];
      lastFetch = Date.now();
      try {
        // With metadata: the retry count tells a job's last allowed try.
        jobs = await boss.fetch<unknown>(queue, { batchSize: wanted, includeMetadata: true });
      } catch (error) {
        if (stopping) break;
        logger.error({ err: error, queue }, 'fetching jobs failed');
        await sleep(maxIdleMs);
        continue;
      }
      services.metrics.fetchBatchSize.observe({ queue }, jobs.length);
      for (const job of jobs) {
        pool.start(queue);
        services.metrics.poolInUse.set(pool.active);
        void execute(handler, job);
      }
      if (jobs.length === wanted) continue;
      idleMs = jobs.length > 0 ? MIN_FETCH_GAP_MS : Math.min(maxIdleMs, idleMs * 2);
      if (!stopping) await sleep(idleMs);
    }
  }

  const loops = handlers.map((handler) => queueLoop(handler));
  const wakeAll = () => {
    for (const wake of [...wakers]) wake();
  };
  const listener = listenForWake(
    options.databaseUrl,
    DELIVERY_WAKE_CHANNEL,
    // Only the delivery engine listens: waking every pg-boss queue loop on each admission made them poll their
    // (mostly empty) queues once per admitted message.
    (payload) => engine?.dispatcher.wake(payload === undefined ? null : parseWakePayload(payload)),
    logger,
  );
  await engine?.dispatcher.start();

  return {
    boss,
    workerId,
    get inFlight() {
      return engine?.dispatcher.inFlight ?? 0;
    },
    notify: () => {
      wakeAll();
      engine?.dispatcher.wake(null);
    },
    async stop() {
      stopping = true;
      await listener.close();
      for (const wake of [...wakers]) wake();
      await engine?.stopDispatch();
      // A loop parked on a full pool wakes when a running job finishes.
      await pool.drained();
      await Promise.all(loops);
      await completions.flush();
      await engine?.close();
      await boss.stop({ graceful: true, wait: true, timeout: 5000 });
    },
  };
}
