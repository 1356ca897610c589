import { BURSTS, type Actor, type Services } from '@svc/core';
import type { RateClass } from './route.js';

const BUCKETS = {
  read: { name: 'read', limit: 'read_requests_per_second', burst: BURSTS.read_requests_per_second },
  config_write: { name: 'config_write', limit: 'config_writes_per_second', burst: BURSTS.config_writes_per_second },
} as const;

/** Takes one token from the team's bucket for this kind of request (REST route or GraphQL operation). */
export async function enforceRateLimit(services: Services, actor: Actor, rateClass: RateClass): Promise<void> {
  if (rateClass === 'none') return;
  const bucket = BUCKETS[rateClass];
  await services.rateLimits.take(actor.teamId, bucket.name, {
    rate: services.limits[bucket.limit].value,
    burst: bucket.burst,
  });
}
