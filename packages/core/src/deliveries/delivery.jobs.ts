import { z } from 'zod';
import { defineJobContract } from '../jobs/job-contract.js';

/**
 * One job per due delivery attempt (see docs/delivery.md for why not one per endpoint run). It carries the
 * delivery ID only: bytes, URL and credentials are read when the attempt runs, so pending deliveries go to the
 * endpoint's current URL with its current credentials, and job rows never hold bodies or secrets.
 */
export const deliveryAttemptJob = defineJobContract({
  queue: 'delivery.attempt',
  version: 1,
  payload: z.object({ delivery_id: z.string().startsWith('wdd_') }),
  // A worker that dies mid-attempt: the job comes back after this and the delivery is attempted again.
  expireInSeconds: 120,
  retryLimit: 1000,
});

/** Postgres NOTIFY channel on which admission wakes idle workers at commit (LISTENed by every worker process). */
export const DELIVERY_WAKE_CHANNEL = 'svc_delivery_wake';
