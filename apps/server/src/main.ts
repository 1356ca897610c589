import pino from 'pino';
import { openProductionCore, systemClock } from '@svc/core';
import { readServerConfig } from './config.js';
import { startServer } from './server.js';

/** Production entry point: one server process against DATABASE_URL. */
async function main(): Promise<void> {
  const config = readServerConfig(process.env, 'production');
  const logger = pino({ level: config.logLevel });
  const core = await openProductionCore(config, systemClock);
  const server = await startServer(core.services, config, logger);
  logger.info({ url: server.url }, 'server listening');
  stopOnSignal(async () => {
    await server.close();
    await core.close();
  });
}

function stopOnSignal(stop: () => Promise<void>): void {
  const handler = () => void stop().then(() => process.exit(0));
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
