import { purgeExpiredJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/**
 * Retention (docs/retention.md): first the daily partitions (made a week ahead, whole days dropped past their
 * retention), then, in small batches that never hold a long transaction: message content, response
 * bodies, old messages with their deliveries and attempts, source event IDs, redaction completion, idempotency
 * records past their 35 days and operational events past 30.
 */
export const purgeExpiredHandler = defineJobHandler({
  contract: purgeExpiredJob,
  concurrency: 1,
  async run(_payload, services) {
    await services.partitions.run();
    await services.retention.sweep();
    await services.idempotency.purgeExpired();
    await services.events.purgeExpired();
  },
});
