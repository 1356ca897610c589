import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '@svc/core';
import { buildApp } from './app.js';
import type { ServerConfig } from './config.js';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function startServer(
  services: Services,
  config: ServerConfig,
  logger: FastifyBaseLogger,
): Promise<RunningServer> {
  const { app } = await buildApp(services, config, logger);
  const address = await app.listen({ port: config.port, host: config.host });
  return { url: address, close: () => app.close() };
}
