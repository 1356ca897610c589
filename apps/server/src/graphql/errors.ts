import { HeaderMap } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isServiceError, type ServiceError } from '@svc/core';

/**
 * A service error raised outside a resolver (context, operation checks): Apollo answers it with the REST status
 * of its code (and Retry-After), and `formatGraphqlError` renders the code.
 */
export function toGraphqlError(error: ServiceError): GraphQLError {
  const headers = new HeaderMap();
  if (error.details.retryAfter !== undefined) headers.set('retry-after', String(error.details.retryAfter));
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { http: { status: error.status, headers } },
  });
}

/** The service error behind an error, through any GraphQL wrappers (Apollo wraps validation errors, for one). */
function serviceErrorIn(error: unknown): ServiceError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth += 1) {
    if (isServiceError(current)) return current;
    current = current instanceof GraphQLError ? current.originalError : null;
  }
  return null;
}

/** Errors carry extensions.code equal to the REST error code; unknown errors are opaque. */
export function formatGraphqlError(
  formatted: GraphQLFormattedError,
  error: unknown,
  log: (err: unknown) => void,
): GraphQLFormattedError {
  const serviceError = serviceErrorIn(error);
  if (serviceError) {
    return {
      message: serviceError.message,
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: {
        code: serviceError.code,
        ...(serviceError.details.field !== undefined ? { field: serviceError.details.field } : {}),
        ...(serviceError.details.resourceId !== undefined ? { resource_id: serviceError.details.resourceId } : {}),
      },
    };
  }
  const original = error instanceof GraphQLError ? error.originalError : error;
  const code = formatted.extensions?.['code'];
  if (
    original &&
    !(original instanceof GraphQLError) &&
    code !== 'GRAPHQL_VALIDATION_FAILED' &&
    code !== 'BAD_USER_INPUT'
  ) {
    log(original);
    return {
      message: 'internal error',
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: 'internal_error' },
    };
  }
  return formatted;
}
