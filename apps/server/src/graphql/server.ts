import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { isServiceError, type Services } from '@svc/core';
import { PublicLimits } from '../public-limits.js';
import { checkSvcMode } from '../rest/pipeline.js';
import type { GraphqlContext } from './context.js';
import { formatGraphqlError, toGraphqlError } from './errors.js';
import { checkDocumentLimits, DOCUMENT_LIMITS } from './document-limits.js';
import { authenticateRequest } from './authorization.js';
import { operationGuardPlugin } from './guard.plugin.js';
import { landingPagePlugin } from './landing-page.js';
import { validationBudgetRule } from './validation-budget.js';
import { buildGraphqlSchema } from './schema.js';

export const GRAPHQL_PATH = '/graphql';

/** The Apollo server of /graphql: opaque errors without stack traces, the operation guard, an offline landing page. */
export async function createGraphqlServer(
  app: FastifyInstance,
  logger: FastifyBaseLogger,
  publicBaseUrl: string,
  validationMs: number = DOCUMENT_LIMITS.validationMs,
): Promise<ApolloServer<GraphqlContext>> {
  const schema = await buildGraphqlSchema({ publicBaseUrl });
  return new ApolloServer<GraphqlContext>({
    schema,
    // The process owns its signals (graceful stop of server, worker and Postgres); Apollo must not re-raise them.
    stopOnTerminationSignals: false,
    plugins: [
      fastifyApolloDrainPlugin(app),
      operationGuardPlugin(),
      ApolloServerPluginLandingPageDisabled(),
      landingPagePlugin(schema, `${publicBaseUrl}${GRAPHQL_PATH}`),
    ],
    introspection: true,
    // Bounds of the parse and the validation (docs/api-choices.md); the context checks the document's limits first.
    parseOptions: { maxTokens: DOCUMENT_LIMITS.tokens },
    validationRules: [validationBudgetRule(validationMs)],
    // No client of ours sends query hashes; a cache the unauthenticated could fill is not kept.
    persistedQueries: false,
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) =>
      formatGraphqlError(formatted, error, (err) => logger.error({ err }, 'graphql error')),
  });
}

/** The GraphQL document of a request as Apollo reads it: the `query` of a POST body, or the query string's. */
function documentOf(request: FastifyRequest): unknown {
  if (request.method === 'GET') {
    const search = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
    return search.getAll('query').length === 1 ? search.get('query') : undefined;
  }
  const body: unknown = request.body;
  return body !== null && typeof body === 'object' && 'query' in body ? body.query : undefined;
}

/**
 * The context of one request, made before Apollo parses anything. Svc-Mode is checked first, as on REST, and
 * answered with its REST status (422). An address that has spent its unauthenticated GraphQL work (public-limits.ts)
 * is refused (429) before its document is read, unless it sends credentials, which are then checked first (401/403
 * without parsing anything). Then the document's limits, one pass of the lexer (422 invalid_field). A refusal here is
 * work no team paid for: it counts against the address.
 */
export function graphqlContext(services: Services) {
  const publicLimits = new PublicLimits(services);
  return async (request: FastifyRequest): Promise<GraphqlContext> => {
    const context: GraphqlContext = {
      services,
      authorization: request.headers.authorization,
      clientAddress: request.ip,
      publicLimits,
    };
    try {
      checkSvcMode(request.headers['svc-mode']);
      const spent = publicLimits.unauthenticatedGraphqlRefusal(context.clientAddress);
      if (spent && context.authorization === undefined) throw spent;
      if (spent) context.actor = await authenticateRequest(context);
      const document = documentOf(request);
      if (typeof document === 'string') checkDocumentLimits(document);
    } catch (error) {
      publicLimits.chargeUnauthenticatedGraphql(context.clientAddress);
      throw isServiceError(error) ? toGraphqlError(error) : error;
    }
    return context;
  };
}
