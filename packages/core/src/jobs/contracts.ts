import { z } from 'zod';
import { deliveryAttemptJob } from '../deliveries/delivery.jobs.js';
import { defineJobContract, type JobContract } from './job-contract.js';

/** Retention sweeps: expired idempotency records (later: content, attempts, events), in small batches. */
export const purgeExpiredJob = defineJobContract({
  queue: 'maintenance.purge-expired',
  version: 1,
  payload: z.object({}),
  cron: '*/10 * * * *',
});

/** Every job contract; each process creates their queues at start. */
export const JOB_CONTRACTS: readonly JobContract<unknown>[] = [
  purgeExpiredJob as JobContract<unknown>,
  deliveryAttemptJob as JobContract<unknown>,
];
