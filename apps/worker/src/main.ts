import pino from 'pino';
import { openProductionCore, readCoreConfig, systemClock } from '@svc/core';
import { startWorker } from './worker.js';

/** Production entry point: one worker process against DATABASE_URL. */
async function main(): Promise<void> {
  const config = readCoreConfig(process.env, 'production');
  const logger = pino({ level: config.logLevel });
  const core = await openProductionCore(config, systemClock);
  const worker = await startWorker({ databaseUrl: config.databaseUrl!, services: core.services, logger });
  logger.info('worker started');
  const handler = () =>
    void worker
      .stop()
      .then(() => core.close())
      .then(() => process.exit(0));
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
