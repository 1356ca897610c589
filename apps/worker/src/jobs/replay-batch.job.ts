import { replayBatchJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/** One batch of a bulk replay: its generations, their charge and the next job, in one transaction. */
export const replayBatchHandler = defineJobHandler({
  contract: replayBatchJob,
  concurrency: 2,
  async run(payload, services) {
    await services.replays.runBatch(payload.replay_id);
  },
  async giveUp(payload, services) {
    await services.replays.giveUp(payload.replay_id);
  },
});
