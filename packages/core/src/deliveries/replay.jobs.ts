import { z } from 'zod';
import { defineJobContract } from '../jobs/job-contract.js';

/** Creates the next batch of a replay's generations (one transaction per batch). */
export const replayBatchJob = defineJobContract({
  queue: 'replay.batch',
  version: 1,
  payload: z.object({ replay_id: z.string().startsWith('wdr_') }),
  expireInSeconds: 120,
  // A batch that failed (Postgres away, a lock timeout) runs again from its cursor after 5-10 s, 10-20 s, 20-40 s and
  // 40-80 s; one that still fails fails its replay (job_failed) instead of retrying for days.
  retryLimit: 4,
  retryDelaySeconds: 5,
});

/** Looks whether a replay's generations have all finished (then it completes and emits its event). */
export const replayCheckJob = defineJobContract({
  queue: 'replay.check',
  version: 1,
  payload: z.object({ replay_id: z.string().startsWith('wdr_') }),
  expireInSeconds: 60,
  retryLimit: 4,
  retryDelaySeconds: 5,
});
