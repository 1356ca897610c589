import { openDataSource, runMigrations } from '@svc/db';
import type { UrlPolicy } from '@svc/egress';
import type { Clock } from './common/clock.js';
import type { Limits } from './catalog/limits.js';
import { ENTITIES } from './entities.js';
import { createServices, type Services } from './services.js';

export interface OpenCoreOptions {
  databaseUrl: string;
  clock: Clock;
  limits: Limits;
  serviceId: string;
  region: string;
  sealingKey: Buffer;
  urlPolicy: UrlPolicy;
  poolSize?: number;
  migrate?: boolean;
}

/** Opens the database (applying migrations first unless told not to) and builds the services over it. */
export async function openCore(options: OpenCoreOptions): Promise<{ services: Services; close(): Promise<void> }> {
  if (options.migrate !== false) await runMigrations(options.databaseUrl);
  const db = await openDataSource(options.databaseUrl, ENTITIES, options.poolSize);
  const services = createServices({ ...options, db });
  return { services, close: () => db.destroy() };
}
