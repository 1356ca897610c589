import pino from 'pino';
import { DEFAULT_LIMITS, openCore, systemClock } from '@svc/core';
import { startWorker } from './worker.js';

/** Production entry point: one worker process against DATABASE_URL. */
async function main(): Promise<void> {
  const databaseUrl = process.env['DATABASE_URL'];
  const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'info' });
  if (!databaseUrl) throw new Error('DATABASE_URL is required in production mode (npm start runs local mode)');
  const core = await openCore({
    databaseUrl,
    clock: systemClock,
    limits: DEFAULT_LIMITS,
    serviceId: 'svc-webhooks',
    region: process.env['SVC_REGION'] ?? 'local',
  });
  const worker = await startWorker({ databaseUrl, services: core.services, logger });
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
