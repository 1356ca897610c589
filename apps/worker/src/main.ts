import pino from 'pino';
import { openCore, readCoreConfig, systemClock } from '@svc/core';
import { startWorker } from './worker.js';

/** Production entry point: one worker process against DATABASE_URL. */
async function main(): Promise<void> {
  const config = readCoreConfig(process.env, 'production');
  const logger = pino({ level: config.logLevel });
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required in production mode (npm start runs local mode)');
  if (!config.sealingKey)
    throw new Error('SVC_ENCRYPTION_KEY (base64 of 32 random bytes) is required in production mode');
  const core = await openCore({
    ...config,
    databaseUrl: config.databaseUrl,
    sealingKey: config.sealingKey,
    clock: systemClock,
  });
  const worker = await startWorker({ databaseUrl: config.databaseUrl, services: core.services, logger });
  logger.info('worker started');
  const stop = async () => {
    await worker.stop();
    await core.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
