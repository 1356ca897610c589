import { closeBillingMonthsJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/** Closes the billing months that have ended (docs/usage.md, Closing a billing month). */
export const closeBillingMonthsHandler = defineJobHandler({
  contract: closeBillingMonthsJob,
  concurrency: 1,
  async run(_payload, services) {
    await services.usage.closeEndedMonths();
  },
});
