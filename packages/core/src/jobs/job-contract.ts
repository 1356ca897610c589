import type { z } from 'zod';

/**
 * A job's contract, shared by whoever sends it (core services, in the sender's transaction) and the worker that
 * runs it: the queue name, a version the handler checks, and a payload schema that carries IDs only (never
 * bodies or secrets: job rows are not encrypted and outlive the work).
 */
export interface JobContract<P> {
  readonly queue: string;
  readonly version: number;
  readonly payload: z.ZodType<P>;
  /** Cron schedule (UTC) for recurring jobs. */
  readonly cron?: string;
  /** Seconds a fetched job may run before pg-boss treats its worker as dead and hands it out again. */
  readonly expireInSeconds?: number;
  /**
   * Automatic retries of a job that failed (not the delivery retry schedule, which the engine owns); at most
   * MAX_JOB_RETRIES. After the last one the worker gives up: see the handler's giveUp.
   */
  readonly retryLimit?: number;
  /** Seconds before the first automatic retry; each later one waits twice as long (pg-boss backoff). */
  readonly retryDelaySeconds?: number;
}

export function defineJobContract<P>(contract: JobContract<P>): JobContract<P> {
  return contract;
}

/** The stored job data: the payload with the contract version it was sent under. */
export type JobEnvelope<P> = P & { v: number };
