import type { Harness } from '../testing/harness.js';

export interface GraphqlResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface GraphqlRequestOptions {
  /** A bearer token (secret key or console session); null sends none. Defaults to the harness team's key. */
  key?: string | null;
  headers?: Record<string, string>;
}

/** POSTs one GraphQL operation to the harness server over real HTTP. */
export function graphqlClient(h: Harness) {
  return async (
    query: string,
    variables: Record<string, unknown> = {},
    options: GraphqlRequestOptions = {},
  ): Promise<GraphqlResponse> => {
    const key = options.key === undefined ? h.team.key : options.key;
    const response = await fetch(`${h.rootUrl}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...options.headers,
      },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text) };
  };
}

/** `n` aliased copies of a field: `a0: field a1: field ...`. */
export function aliased(n: number, field: (i: number) => string): string {
  return Array.from({ length: n }, (_, i) => `a${i}: ${field(i)}`).join('\n');
}
