import 'reflect-metadata';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { buildSchema, type AuthChecker } from 'type-graphql';
import { isServiceError, type Services } from '@svc/core';
import { enforceRateLimit } from '../rest/rate-limit.js';
import type { GraphqlContext } from './context.js';
import { EndpointResolver } from './endpoint.resolver.js';
import { EventTypeResolver, SettingsResolver, TenantResolver, ViewerResolver } from './resolvers.js';
import { ConsoleSessionResolver } from './session.resolver.js';

/**
 * Every resolver declares @Authorized() (but the console session mutations, whose credential is their input); the
 * checker authenticates the bearer key like the REST adapter, or a console session token (svc_cs_).
 */
const authChecker: AuthChecker<GraphqlContext> = async ({ context, info }) => {
  if (!context.actor) {
    const actor = await context.services.consoleSessions.authenticateConsole(context.authorization);
    // One token per GraphQL request, from the bucket of its kind, like the REST adapter.
    await enforceRateLimit(context.services, actor, info.operation.operation === 'mutation' ? 'config_write' : 'read');
    context.actor = actor;
  }
  return true;
};

export function buildGraphqlSchema() {
  return buildSchema({
    resolvers: [
      ViewerResolver,
      TenantResolver,
      EventTypeResolver,
      SettingsResolver,
      EndpointResolver,
      ConsoleSessionResolver,
    ],
    authChecker,
    validate: false,
  });
}

/** Errors carry extensions.code equal to the REST error code; unknown errors are opaque. */
export function formatGraphqlError(
  formatted: GraphQLFormattedError,
  error: unknown,
  log: (err: unknown) => void,
): GraphQLFormattedError {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (isServiceError(original)) {
    return {
      message: original.message,
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: {
        code: original.code,
        ...(original.details.field !== undefined ? { field: original.details.field } : {}),
        ...(original.details.resourceId !== undefined ? { resource_id: original.details.resourceId } : {}),
      },
    };
  }
  const code = formatted.extensions?.['code'];
  if (
    original &&
    !(original instanceof GraphQLError) &&
    code !== 'GRAPHQL_VALIDATION_FAILED' &&
    code !== 'BAD_USER_INPUT'
  ) {
    log(original);
    return { message: 'internal error', extensions: { code: 'internal_error' } };
  }
  return formatted;
}

export type { Services };
