import pino from 'pino';
import { LOG_SERIALIZERS, openProductionCore, startConfiguredTracing, systemClock } from '@svc/core';
import { readServerConfig } from './config.js';
import { startServer } from './server.js';

/** Production entry point: one server process against DATABASE_URL. */
async function main(): Promise<void> {
  const config = readServerConfig(process.env, 'production');
  for (const warning of config.warnings) console.warn(warning);
  const logger = pino({ level: config.logLevel, serializers: LOG_SERIALIZERS });
  const tracing = await startConfiguredTracing(config.tracing, 'svc-webhooks-server');
  if (config.tracing)
    logger.info({ otlp: new URL(config.tracing.tracesUrl).origin }, 'tracing exports spans over OTLP');
  const core = await openProductionCore(config, systemClock);
  const server = await startServer(core.services, config, logger);
  logger.info({ url: server.url }, 'server listening');
  stopOnSignal(async () => {
    await server.close();
    await core.close();
    await tracing?.shutdown();
  });
}

/**
 * Stops once, on the first SIGTERM or SIGINT. The handlers stay installed: a later signal (a second Ctrl-C, or
 * Apollo Server re-sending the signal to itself after its own stop) must not kill the process mid-close.
 */
function stopOnSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    void stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/** A failure to start is one line: what is wrong (a missing setting, an unreachable database, a port in use). */
function oneLine(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(oneLine).join('; ');
  return error instanceof Error ? error.message : String(error);
}

main().catch((error: unknown) => {
  console.error(`server did not start: ${oneLine(error)}`);
  process.exit(1);
});
