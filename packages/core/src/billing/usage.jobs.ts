import { z } from 'zod';
import { defineJobContract } from '../jobs/job-contract.js';

/**
 * Closes every team's ended billing months (UsageService.closeEndedMonths). Hourly: a month is closed within the
 * first hour of the next one, and a close that could not take its locks is taken again an hour later. A request
 * that needs a month closed before then (GET /meta/usage of that month) closes it itself.
 */
export const closeBillingMonthsJob = defineJobContract({
  queue: 'maintenance.close-billing-months',
  version: 1,
  payload: z.object({}),
  cron: '7 * * * *',
});
