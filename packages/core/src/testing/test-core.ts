import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { openCore } from '../boot.js';
import type { Clock } from '../common/clock.js';
import type { Services } from '../services.js';
import { testCoreOptions } from './core-options.js';

/**
 * For a core test file: a fresh database of the test run's Postgres and the services over it, opened before the
 * file's tests and dropped after them. Read `services` inside tests (it is set once beforeAll has run).
 */
export function useTestCore(clock: Clock): { readonly services: Services } {
  let services: Services | undefined;
  let close: () => Promise<void> = async () => undefined;
  let drop: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const core = await openCore(testCoreOptions(database.url, clock));
    services = core.services;
    close = core.close;
  });
  afterAll(async () => {
    await close();
    await drop();
  });
  return {
    get services(): Services {
      if (!services) throw new Error('useTestCore: services are read before beforeAll ran');
      return services;
    },
  };
}
