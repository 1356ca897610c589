import type { z } from 'zod';
import type { Services } from '@svc/core';

/** One job definition per file: an ID (the pg-boss queue), a version and a payload schema that carries IDs only. */
export interface JobDefinition<P> {
  id: string;
  version: number;
  payload: z.ZodType<P>;
  /** Cron schedule (UTC) for recurring jobs. */
  cron?: string;
  run(payload: P, services: Services): Promise<void>;
}

export function defineJob<P>(definition: JobDefinition<P>): JobDefinition<P> {
  return definition;
}
