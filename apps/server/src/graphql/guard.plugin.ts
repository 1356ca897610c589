import type { ApolloServerPlugin } from '@apollo/server';
import { isServiceError, type Actor, type RateClass } from '@svc/core';
import { enforceRateLimit } from '../rest/rate-limit.js';
import { authenticateRequest, checkPortalSeparation, PORTAL, rootFieldAccess } from './authorization.js';
import type { GraphqlContext } from './context.js';
import { toGraphqlError } from './errors.js';
import { createLoaders } from './loaders.js';
import { checkCostBudget, measureCost, tokensOf } from './operation-cost.js';
import { checkOperationLimits, measureOperation } from './operation-limits.js';

/**
 * The common rules of a GraphQL request, once per request and before any resolver runs (the REST pipeline's
 * order): the operation's size limits and its cost budget (422 invalid_field), authentication (401/403), then the
 * rate limit — tokens in proportion to the rows the operation can read, all taken up front, so a document is either
 * refused whole (429 rate_limited) or runs whole.
 */

/**
 * Mutations that admit paid work (like POST /messages, /endpoints/{id}/test and /deliveries/{id}/replay) spend the
 * admission bucket.
 */
export const ADMISSION_FIELDS: ReadonlySet<string> = new Set(['publishMessage', 'sendTestMessage', 'replayDelivery']);

/**
 * The bucket an operation's tokens come from: reads for queries; admissions for a mutation made only of
 * admissions; configuration writes for any other mutation (a mixed one included, the stricter bucket).
 */
function rateClassOf(kind: string, rootFields: ReadonlySet<string>): RateClass {
  if (kind !== 'mutation') return 'read';
  return [...rootFields].every((name) => ADMISSION_FIELDS.has(name)) ? 'admission' : 'config_write';
}

/**
 * Takes `count` tokens from one bucket at once (the takes of one tick share one statement). A refusal refuses the
 * document; the tokens granted to it stay spent.
 */
async function takeTokens(context: GraphqlContext, actor: Actor, rateClass: RateClass, count: number): Promise<void> {
  const takes = await Promise.allSettled(
    Array.from({ length: count }, () => enforceRateLimit(context.services, actor, rateClass)),
  );
  const refused = takes.find((take) => take.status === 'rejected');
  if (refused) throw refused.reason;
}

/**
 * A portal session's own bucket (docs/portal.md), taken once per operation before the team's: one customer's portal
 * cannot spend much of its operator's API rate.
 */
const PORTAL_SESSION_LIMIT = { bucket: 'portal_session', spec: { rate: 5, burst: 50 } } as const;

export function operationGuardPlugin(): ApolloServerPlugin<GraphqlContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, document, operation, schema, request }) {
          // Apollo resolves the operation before this hook and refuses a document without one.
          if (!operation) return;
          try {
            const shape = measureOperation(document, operation);
            checkOperationLimits(shape);
            const cost = measureCost(schema, document, operation, request.variables ?? {});
            checkCostBudget(cost);
            const rootType = operation.operation === 'mutation' ? 'Mutation' : 'Query';
            const access = rootFieldAccess(schema);
            const accessOf = (name: string) => access.get(`${rootType}.${name}`);
            const needsKey = [...shape.rootFieldNames].some((name) => {
              const kind = accessOf(name);
              return kind === 'key' || kind === 'portal';
            });
            if (!needsKey) return;
            // Credentials may have been checked already, before the document (an address over its public limit).
            const actor = contextValue.actor ?? (await authenticateRequest(contextValue));
            // A document mixing portal and operator fields is refused whole, before anything runs.
            for (const name of shape.rootFieldNames)
              if (accessOf(name) !== 'public')
                checkPortalSeparation(actor, accessOf(name) === 'portal' ? [PORTAL] : []);
            if (actor.portal)
              await contextValue.services.rateLimits.take(
                actor.portal.sessionId,
                PORTAL_SESSION_LIMIT.bucket,
                PORTAL_SESSION_LIMIT.spec,
              );
            const tokens = tokensOf(cost, operation.operation);
            await takeTokens(contextValue, actor, rateClassOf(operation.operation, shape.rootFieldNames), tokens.own);
            await takeTokens(contextValue, actor, 'read', tokens.read);
            contextValue.actor = actor;
            contextValue.loaders = createLoaders(contextValue.services, { actor });
          } catch (error) {
            throw isServiceError(error) ? toGraphqlError(error) : error;
          }
        },
        // Work no team paid for (refused before authentication, or public fields only) counts against the address.
        async willSendResponse({ contextValue }) {
          if (!contextValue.actor) contextValue.publicLimits.chargeUnauthenticatedGraphql(contextValue.clientAddress);
        },
      };
    },
  };
}
