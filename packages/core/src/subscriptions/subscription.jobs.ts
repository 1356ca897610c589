import { z } from 'zod';
import { defineJobContract } from '../jobs/job-contract.js';

/**
 * One attempt of a subscription delivery (or, at the end of a 24-hour block, the release of the delivery that
 * blocked its subscription). The claim decides whether the delivery may go now: due, not leased, and first in its
 * subscription's commit order. A job for a delivery that may not go yet is a no-op; whoever makes it eligible
 * (the settlement of the delivery before it, its retry time) sends another.
 */
export const subscriptionDeliveryJob = defineJobContract({
  queue: 'platform.subscription-delivery',
  version: 1,
  payload: z.object({ delivery_id: z.string().min(1) }),
  // The attempt itself is bounded by the 10-second acknowledgement time; a worker that dies mid-attempt has its
  // job handed out again after this, and the claim's lease has lapsed by then.
  expireInSeconds: 60,
  retryLimit: 5,
});

/**
 * Every minute: release deliveries that blocked their subscription for 24 hours, send jobs for pending deliveries
 * nobody will run (a lost job), and purge events, deliveries and attempts past their 30 days, in small batches.
 */
export const subscriptionSweepJob = defineJobContract({
  queue: 'platform.subscription-sweep',
  version: 1,
  payload: z.object({}),
  cron: '* * * * *',
});
