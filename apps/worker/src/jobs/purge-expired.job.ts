import { purgeExpiredJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/** Retention: drops idempotency records past their 35 days and operational events past 30, in small batches. */
export const purgeExpiredHandler = defineJobHandler({
  contract: purgeExpiredJob,
  concurrency: 1,
  async run(_payload, services) {
    await services.idempotency.purgeExpired();
    await services.events.purgeExpired();
  },
});
