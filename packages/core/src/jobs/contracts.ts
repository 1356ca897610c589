import { z } from 'zod';
import { analyticsRollupJob } from '../analytics/analytics.jobs.js';
import { closeBillingMonthsJob } from '../billing/usage.jobs.js';
import { deliveryReconcileJob } from '../deliveries/delivery.jobs.js';
import { replayBatchJob, replayCheckJob } from '../deliveries/replay.jobs.js';
import { subscriptionDeliveryJob, subscriptionSweepJob } from '../subscriptions/subscription.jobs.js';
import { defineJobContract, type JobContract } from './job-contract.js';

/**
 * Retention sweeps (docs/retention.md): content, response bodies, old messages, source event IDs, redaction
 * completion, idempotency records and operational events, in small batches. Every 5 minutes: a redaction completes well within 24 hours.
 */
export const purgeExpiredJob = defineJobContract({
  queue: 'maintenance.purge-expired',
  version: 1,
  payload: z.object({}),
  cron: '*/5 * * * *',
});

/** Every job contract; each process creates their queues at start. */
export const JOB_CONTRACTS: readonly JobContract<unknown>[] = [
  purgeExpiredJob as JobContract<unknown>,
  deliveryReconcileJob as JobContract<unknown>,
  analyticsRollupJob as JobContract<unknown>,
  closeBillingMonthsJob as JobContract<unknown>,
  replayBatchJob as JobContract<unknown>,
  replayCheckJob as JobContract<unknown>,
  subscriptionDeliveryJob as JobContract<unknown>,
  subscriptionSweepJob as JobContract<unknown>,
];
