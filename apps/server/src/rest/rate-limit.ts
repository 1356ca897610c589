import type { Actor, RateClass, Services } from '@svc/core';

/** Takes one token from the team's bucket for this kind of request (REST route or GraphQL root field). */
export async function enforceRateLimit(services: Services, actor: Actor, rateClass: RateClass | 'none'): Promise<void> {
  if (rateClass === 'none') return;
  await services.rateLimits.takeFor(actor.teamId, rateClass);
}
