import { replayCheckJob } from '@svc/core';
import { defineJobHandler } from './job.js';

/** Completes a bulk replay once its generations have all finished (else it looks again a little later). */
export const replayCheckHandler = defineJobHandler({
  contract: replayCheckJob,
  concurrency: 2,
  async run(payload, services) {
    await services.replays.checkCompletion(payload.replay_id);
  },
  async giveUp(payload, services) {
    await services.replays.giveUp(payload.replay_id);
  },
});
