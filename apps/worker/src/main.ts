import pino from 'pino';
import { LOG_SERIALIZERS, openProductionCore, readCoreConfig, startConfiguredTracing, systemClock } from '@svc/core';
import { startWorker } from './worker.js';
import { readMetricsServerSettings, startMetricsServer } from './metrics-server.js';

/** Production entry point: one worker process against DATABASE_URL. */
async function main(): Promise<void> {
  const config = readCoreConfig(process.env, 'production');
  const metricsSettings = readMetricsServerSettings(process.env);
  for (const warning of config.warnings) console.warn(warning);
  const logger = pino({ level: config.logLevel, serializers: LOG_SERIALIZERS });
  const tracing = await startConfiguredTracing(config.tracing, 'svc-webhooks-worker');
  if (config.tracing)
    logger.info({ otlp: new URL(config.tracing.tracesUrl).origin }, 'tracing exports spans over OTLP');
  const core = await openProductionCore(config, systemClock);
  const worker = await startWorker({
    databaseUrl: config.databaseUrl!,
    services: core.services,
    logger,
    docsUrl: `${config.publicBaseUrl}/v1`,
  });
  logger.info({ worker_id: worker.workerId }, 'worker started');
  if (metricsSettings)
    logger.info({ port: (await startMetricsServer(core.services.metrics, metricsSettings)).port }, 'metrics served');
  // Stops once; later signals (a second Ctrl-C) must not kill it halfway through settling its jobs.
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    void worker
      .stop()
      .then(() => core.close())
      .then(() => tracing?.shutdown())
      .then(() => process.exit(0));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/** A failure to start is one line: what is wrong (a missing setting, an unreachable database). */
function oneLine(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(oneLine).join('; ');
  return error instanceof Error ? error.message : String(error);
}

main().catch((error: unknown) => {
  console.error(`worker did not start: ${oneLine(error)}`);
  process.exit(1);
});
