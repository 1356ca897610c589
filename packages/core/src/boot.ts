import { DEFAULT_SESSION_TIMEOUTS, HotSql, openDataSource, pgPoolOf, runMigrations, warmPool } from '@svc/db';
import type { Clock } from './common/clock.js';
import { Sealer } from './common/sealing.js';
import { checkSealingKey } from './common/sealing-key-check.js';
import { DEFAULT_POOL_SIZE, type CoreConfig } from './config.js';
import { ENTITIES } from './entities.js';
import { JOB_CONTRACTS } from './jobs/contracts.js';
import { PgBossJobQueue } from './jobs/job-queue.js';
import { createServices, type CoreOptions, type Services } from './services.js';

export interface OpenCoreOptions extends Omit<CoreOptions, 'db' | 'hot' | 'jobs'> {
  databaseUrl: string;
  poolSize?: number;
  /** Connections of the hot paths' plan-cached statements (HotSql). */
  hotPoolSize?: number;
  migrate?: boolean;
  /**
   * Check the sealing key against the database before anything else (docs/upgrading.md); default true. Only a
   * process that never seals or opens a secret (the admin CLI) skips it, and then records no check value either.
   */
  checkSealingKey?: boolean;
  /**
   * Keep the pools' connections once made and, in the background, open them all and plan the hot statements on each
   * (`warmPool`): the production processes, so a burst after a quiet spell meets warm backends. Tests leave it off.
   */
  warmPools?: boolean;
}

export interface OpenedCore {
  services: Services;
  /** The job queue (the worker fetches and completes through its pg-boss). */
  jobQueue: PgBossJobQueue;
  /** With warmPools: the statements planned once every connection is open and warm (0 when it failed or is off). */
  warmed: Promise<number>;
  close(): Promise<void>;
}

/**
 * Opens the database (applying migrations first unless told not to), checks the sealing key against it (a wrong key
 * throws a ConfigError: one line) and builds the services over it.
 */
export async function openCore(options: OpenCoreOptions): Promise<OpenedCore> {
  if (options.migrate !== false) await runMigrations(options.databaseUrl);
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  const warm = options.warmPools ?? false;
  const db = await openDataSource(options.databaseUrl, ENTITIES, poolSize, DEFAULT_SESSION_TIMEOUTS, warm);
  if (options.checkSealingKey !== false) {
    try {
      await checkSealingKey(db, new Sealer(options.sealingKey));
    } catch (error) {
      await db.destroy();
      throw error;
    }
  }
  const jobQueue = await PgBossJobQueue.open(options.databaseUrl, options.clock, JOB_CONTRACTS);
  const hot = HotSql.open(options.databaseUrl, options.hotPoolSize ?? 4, { keepConnections: warm });
  const services = createServices({ ...options, db, hot, jobs: jobQueue });
  // Not awaited: the process serves meanwhile; close() waits for it so no connection is opened after the pools end.
  const warmed = warm
    ? Promise.all([hot.warm(), warmPool(pgPoolOf(db), poolSize)]).then(
        ([a, b]) => a + b,
        () => 0,
      )
    : Promise.resolve(0);
  return {
    services,
    jobQueue,
    warmed,
    async close() {
      await warmed;
      await jobQueue.stop();
      await hot.close();
      await db.destroy();
    },
  };
}

/** Production processes (server, worker): refuse to start without a database or a sealing key. */
export function openProductionCore(config: CoreConfig, clock: Clock): Promise<OpenedCore> {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required in production mode (npm start runs local mode)');
  if (!config.sealingKey)
    throw new Error('SVC_ENCRYPTION_KEY (base64 of 32 random bytes) is required in production mode');
  return openCore({
    ...config,
    databaseUrl: config.databaseUrl,
    sealingKey: config.sealingKey,
    clock,
    warmPools: true,
  });
}
