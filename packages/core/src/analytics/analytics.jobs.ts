import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineJobContract } from '../jobs/job-contract.js';

/** How often the rollup runs: facts show in GET /analytics within about this long plus a run's duration. */
export const ROLLUP_INTERVAL_MS = 20_000;

/**
 * Folds analytics facts into the hourly rollups and samples the queue gauges (docs/analytics.md). The cron is the
 * seed (pg-boss cron fires at most once a minute); each run then queues the next one ROLLUP_INTERVAL_MS later.
 */
export const analyticsRollupJob = defineJobContract({
  queue: 'maintenance.analytics-rollup',
  version: 1,
  payload: z.object({}),
  cron: '* * * * *',
  retryLimit: 0,
});

/**
 * The job of the interval after `now`, with an ID derived from the interval: every run (and a cron run beside them)
 * names the next one the same, so pg-boss stores it once and runs never multiply.
 */
export function nextRollupRun(now: Date): { id: string; startAfter: Date } {
  const slot = Math.floor(now.getTime() / ROLLUP_INTERVAL_MS) + 1;
  const hex = createHash('sha256').update(`analytics-rollup:${slot}`).digest('hex');
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  return { id, startAfter: new Date(slot * ROLLUP_INTERVAL_MS) };
}
