import { analyticsRollupJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/**
 * Analytics (docs/analytics.md): folds the facts the transitions appended into the hourly rollups, samples the queue
 * gauges, then queues the next run, so GET /analytics trails the transitions by about 20 seconds.
 */
export const analyticsRollupHandler = defineJobHandler({
  contract: analyticsRollupJob,
  concurrency: 1,
  async run(_payload, services) {
    try {
      await services.analytics.rollUp();
    } finally {
      await services.analytics.scheduleNextRollup();
    }
  },
});
