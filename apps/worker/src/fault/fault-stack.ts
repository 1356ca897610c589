import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase } from '@svc/db';
import { startDeployment, type Deployment, type DeploymentOptions } from './deployment.js';
import { killStartedProcesses } from './processes.js';
import { startReceiver, type Receiver } from './receiver.js';

/** What a fault test file runs against: a fresh database, the real server and workers, one loopback receiver. */
export interface FaultStack {
  readonly d: Deployment;
  readonly receiver: Receiver;
}

/**
 * Starts a deployment and a receiver over a fresh database before the file's tests and tears all of it down after
 * them (processes the test started included, even when a test failed half-way).
 */
export function useFaultStack(options: Omit<DeploymentOptions, 'databaseUrl'> = {}): FaultStack {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let deployment: Deployment | undefined;
  let receiver: Receiver | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startReceiver();
    deployment = await startDeployment({ ...options, databaseUrl: database.url });
  }, 60_000);

  afterAll(async () => {
    await killStartedProcesses();
    await deployment?.close();
    await receiver?.close();
    await database?.drop();
  });

  return {
    get d() {
      if (!deployment) throw new Error('the fault stack is not started (use it inside a test)');
      return deployment;
    },
    get receiver() {
      if (!receiver) throw new Error('the fault stack is not started (use it inside a test)');
      return receiver;
    },
  };
}
