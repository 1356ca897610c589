import { subscriptionSweepJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/**
 * The event subscriptions' safety net and retention (docs/platform.md): releases 24-hour blocks whose release job
 * was lost, queues deliveries that may go but have no job, purges history past 30 days.
 */
export const subscriptionSweepHandler = defineJobHandler({
  contract: subscriptionSweepJob,
  concurrency: 1,
  async run(_payload, services) {
    await services.subscriptionDispatch.sweep();
  },
});
