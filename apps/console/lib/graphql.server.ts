import 'server-only';
import { headers } from 'next/headers';
import type { TypedDocumentString } from '@/gql/graphql';
import type { ApiError } from './api-error';
import { consoleConfig } from './config.server';

interface GraphqlErrorBody {
  message?: unknown;
  extensions?: { code?: unknown; field?: unknown };
}

interface GraphqlResponseBody<TData> {
  data?: TData | null;
  errors?: GraphqlErrorBody[];
}

/** A GraphQL call that failed; `error` is what forms and notifications show. */
export class ApiFailure extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
    this.name = 'ApiFailure';
  }
}

/** Turns the first GraphQL error into `{ code, message, field }`; codes are the REST API's error codes. */
export function toApiError(errors: readonly GraphqlErrorBody[] | undefined): ApiError {
  const first = errors?.[0];
  const code = first?.extensions?.code;
  const field = first?.extensions?.field;
  const message = first?.message;
  return {
    // Schema-level rejections (a string where an Int belongs) carry GraphQL's own codes; they are bad input.
    code:
      typeof code === 'string'
        ? code === 'BAD_USER_INPUT' || code === 'GRAPHQL_VALIDATION_FAILED'
          ? 'invalid_field'
          : code
        : 'internal_error',
    message: typeof message === 'string' && message !== '' ? message : 'The API answered with an error.',
    field: typeof field === 'string' ? field : null,
  };
}

/**
 * A typed document's variables as an argument list: none for an operation without variables. Absent optional
 * variables are left out, not sent as null: the API treats an explicit null as a value to check.
 */
export type VariablesArgument<TVariables> = TVariables extends Record<string, never> ? [] : [variables: TVariables];

/**
 * The browser's address chain as this request reached the console (Next.js sets X-Forwarded-For to the peer's
 * address when no proxy did). The API reads it only when SVC_TRUSTED_PROXIES names the console's address, and then
 * limits sign-ins and portal links per browser instead of for the console as a whole (docs/operations.md).
 */
async function forwardedFor(): Promise<Record<string, string>> {
  try {
    const chain = (await headers()).get('x-forwarded-for');
    return chain ? { 'x-forwarded-for': chain } : {};
  } catch {
    // Outside a request (a build step): nothing to forward.
    return {};
  }
}

/**
 * Sends one GraphQL operation (a document from `graphql()` of `@/gql`, typed from the schema) and returns its data,
 * or throws ApiFailure. `bearer` is the console session token (null only for the public session mutations).
 */
export async function sendGraphql<TData, TVariables>(
  bearer: string | null,
  document: TypedDocumentString<TData, TVariables>,
  ...[variables]: VariablesArgument<NoInfer<TVariables>>
): Promise<TData> {
  let response: Response;
  try {
    response = await fetch(consoleConfig.graphqlUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        // The public mutations (sign-in, portal links) are limited per client address.
        ...(bearer === null ? await forwardedFor() : { authorization: `Bearer ${bearer}` }),
      },
      body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
      cache: 'no-store',
      signal: AbortSignal.timeout(consoleConfig.requestTimeoutMs),
    });
  } catch (cause) {
    console.error('GraphQL API unreachable', cause);
    throw new ApiFailure({
      code: 'temporarily_unavailable',
      message: 'The API cannot be reached right now. Try again in a moment.',
      field: null,
    });
  }
  let body: GraphqlResponseBody<TData>;
  try {
    body = (await response.json()) as GraphqlResponseBody<TData>;
  } catch {
    throw new ApiFailure({
      code: 'internal_error',
      message: `The API answered ${response.status} without a GraphQL body.`,
      field: null,
    });
  }
  if (body.errors?.length) throw new ApiFailure(toApiError(body.errors));
  if (body.data == null)
    throw new ApiFailure({ code: 'internal_error', message: 'The API answered without data.', field: null });
  return body.data;
}
