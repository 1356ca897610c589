import { randomBytes } from 'node:crypto';
import type { OpenCoreOptions } from '../boot.js';
import type { Clock } from '../common/clock.js';
import { DEFAULT_LIMITS } from '../catalog/limits.js';

/**
 * The sealing key of every core a test process opens (unless a test gives its own): the key is checked against the
 * database at start, so two cores of one test over one database must share it. Processes a test starts over the
 * same database get it as SVC_ENCRYPTION_KEY (testSealingKeyBase64).
 */
export const TEST_SEALING_KEY: Buffer = randomBytes(32);
export const testSealingKeyBase64 = (): string => TEST_SEALING_KEY.toString('base64');

/** Options for tests: the test process's sealing key, loopback receivers allowed, the database already migrated. */
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
    sealingKey: TEST_SEALING_KEY,
    urlPolicy: { allowLoopback: true, serviceHosts: ['svc.test'] },
    migrate: false,
    poolSize: 4,
    ...overrides,
  };
}
