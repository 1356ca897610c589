import type { Actor, RateClass, Services } from '@svc/core';

/**
 * Takes one token from the team's bucket for this kind of request (REST route or GraphQL root field); a receivers'
 * portal session takes it from its own bucket of that kind instead, never the team's (docs/portal.md).
 */
export async function enforceRateLimit(services: Services, actor: Actor, rateClass: RateClass | 'none'): Promise<void> {
  if (rateClass === 'none') return;
  if (actor.portal && rateClass !== 'source')
    await services.rateLimits.takeForPortalSession(actor.teamId, actor.portal.sessionId, rateClass);
  else await services.rateLimits.takeFor(actor.teamId, rateClass);
}
