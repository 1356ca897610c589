import { randomBytes } from 'node:crypto';
import type { OpenCoreOptions } from '../boot.js';
import type { Clock } from '../common/clock.js';
import { DEFAULT_LIMITS } from '../catalog/limits.js';

/** Options for tests: a fresh sealing key, loopback receivers allowed, the database already migrated. */
export function testCoreOptions(
  databaseUrl: string,
  clock: Clock,
  overrides: Partial<OpenCoreOptions> = {},
): OpenCoreOptions {
  return {
    databaseUrl,
    clock,
    limits: DEFAULT_LIMITS,
    serviceId: 'svc-test',
    region: 'test',
    sealingKey: randomBytes(32),
    urlPolicy: { allowLoopback: true, serviceHosts: ['svc.test'] },
    migrate: false,
    poolSize: 4,
    ...overrides,
  };
}
