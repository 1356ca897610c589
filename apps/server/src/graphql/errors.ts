import { HeaderMap } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isServiceError, type ServiceError } from '@svc/core';
import { DOCUMENT_LIMITS } from './document-limits.js';

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

/**
 * graphql-js's own limits, answered in the API's words (invalid_field, field `query`, naming the limit) instead of
 * Apollo's GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED with graphql-js's text. The document limits
 * (document-limits.ts) keep the parser's from being reached; validation's budgets can be.
 */
const GRAPHQL_JS_LIMITS: { code: string; message: RegExp; answer: string }[] = [
  {
    code: 'GRAPHQL_VALIDATION_FAILED',
    message: /^Validation aborted\.$/,
    // graphql-js's comparisons of overlapping fields and fragments, or our CPU budget (validation-budget.ts), which
    // reports its own error first and ends validation this way.
    answer:
      'the document is too complex to validate: validation stopped at its budget (500,000 comparisons of fields ' +
      `and fragments, ${DOCUMENT_LIMITS.validationMs} ms of CPU); make it smaller or simpler`,
  },
  {
    code: 'GRAPHQL_VALIDATION_FAILED',
    message: /^Too many validation errors, error limit reached\. Validation aborted\.$/,
    answer: 'validation stopped after 100 errors, the most one answer lists',
  },
  {
    code: 'GRAPHQL_PARSE_FAILED',
    message: /Document contains more th(?:an|at) \d+ tokens/,
    answer: `the document has more than ${DOCUMENT_LIMITS.tokens.toLocaleString('en-US')} tokens, the most one may have`,
  },
  {
    code: 'GRAPHQL_PARSE_FAILED',
    message: /^Maximum call stack size exceeded$/,
    answer: `the document nests too deeply to parse; at most ${DOCUMENT_LIMITS.nesting} levels of brackets are allowed`,
  },
];

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
  const code = formatted.extensions?.['code'];
  const limit = GRAPHQL_JS_LIMITS.find((known) => known.code === code && known.message.test(formatted.message));
  if (limit) return { message: limit.answer, extensions: { code: 'invalid_field', field: 'query' } };
  const original = error instanceof GraphQLError ? error.originalError : error;
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
