import { z } from 'zod';
import { defineJob } from './job.js';

/** Retention: drops idempotency records past their 35 days, in small batches. */
export const purgeExpiredJob = defineJob({
  id: 'maintenance.purge-expired',
  version: 1,
  payload: z.object({}),
  cron: '*/10 * * * *',
  async run(_payload, services) {
    await services.idempotency.purgeExpired();
  },
});
