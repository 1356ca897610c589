import type { ApolloServerPlugin } from '@apollo/server';
import { isServiceError } from '@svc/core';
import { enforceRateLimit } from '../rest/rate-limit.js';
import { authenticateRequest, rootFieldAccess } from './authorization.js';
import type { GraphqlContext } from './context.js';
import { toGraphqlError } from './errors.js';
import { checkOperationLimits, measureOperation } from './operation-limits.js';

/**
 * The common rules of a GraphQL request, once per request and before any resolver runs (the REST pipeline's
 * order): the operation's size limits (422 invalid_field), authentication (401/403), then the rate limit — one
 * token per root field from the bucket of the operation's kind, all taken up front, so a document is either
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
function rateClassOf(kind: string, rootFields: ReadonlySet<string>): 'read' | 'config_write' | 'admission' {
  if (kind !== 'mutation') return 'read';
  return [...rootFields].every((name) => ADMISSION_FIELDS.has(name)) ? 'admission' : 'config_write';
}

export function operationGuardPlugin(): ApolloServerPlugin<GraphqlContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, document, operation, schema }) {
          // Apollo resolves the operation before this hook and refuses a document without one.
          if (!operation) return;
          try {
            const shape = measureOperation(document, operation);
            checkOperationLimits(shape);
            const rootType = operation.operation === 'mutation' ? 'Mutation' : 'Query';
            const access = rootFieldAccess(schema);
            const needsKey = [...shape.rootFieldNames].some((name) => access.get(`${rootType}.${name}`) === 'key');
            if (!needsKey) return;
            const actor = await authenticateRequest(contextValue);
            const rateClass = rateClassOf(operation.operation, shape.rootFieldNames);
            // One token per root field; the first refusal stops (the tokens already taken stay spent).
            for (let field = 0; field < shape.cost; field += 1)
              await enforceRateLimit(contextValue.services, actor, rateClass);
            contextValue.actor = actor;
          } catch (error) {
            throw isServiceError(error) ? toGraphqlError(error) : error;
          }
        },
      };
    },
  };
}
