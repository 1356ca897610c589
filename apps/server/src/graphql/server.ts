import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { isServiceError, type Services } from '@svc/core';
import { checkSvcMode } from '../rest/pipeline.js';
import type { GraphqlContext } from './context.js';
import { formatGraphqlError, toGraphqlError } from './errors.js';
import { operationGuardPlugin } from './guard.plugin.js';
import { landingPagePlugin } from './landing-page.js';
import { buildGraphqlSchema } from './schema.js';

export const GRAPHQL_PATH = '/graphql';

/** The Apollo server of /graphql: opaque errors without stack traces, the operation guard, an offline landing page. */
export async function createGraphqlServer(
  app: FastifyInstance,
  logger: FastifyBaseLogger,
  publicBaseUrl: string,
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
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) =>
      formatGraphqlError(formatted, error, (err) => logger.error({ err }, 'graphql error')),
  });
}

/** The context of one request. Svc-Mode is checked first, as on REST, and answered with its REST status (422). */
export function graphqlContext(services: Services) {
  return async (request: FastifyRequest): Promise<GraphqlContext> => {
    try {
      checkSvcMode(request.headers['svc-mode']);
    } catch (error) {
      throw isServiceError(error) ? toGraphqlError(error) : error;
    }
    return { services, authorization: request.headers.authorization };
  };
}
