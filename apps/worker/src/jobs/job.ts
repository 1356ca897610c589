import type { JobContract, Services } from '@svc/core';

/**
 * A job handler: the contract it serves (queue, version, payload schema, all in core) and the code that runs
 * it. One handler per file.
 */
export interface JobHandler<P> {
  contract: JobContract<P>;
  /** Most jobs of this queue running at once in this process. */
  concurrency: number;
  run(payload: P, services: Services): Promise<void>;
  /**
   * Called once when the job failed on its last allowed try (the contract's retryLimit), after the worker has
   * counted it (svc_jobs_given_up_total) and logged it: records the failure where its owner sees it.
   */
  giveUp?(payload: P, services: Services): Promise<void>;
}

export function defineJobHandler<P>(handler: JobHandler<P>): JobHandler<P> {
  return handler;
}
