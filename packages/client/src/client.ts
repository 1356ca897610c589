import createFetchClient, {
  type FetchResponse,
  type MaybeOptionalInit,
  type Middleware,
  type ParseAs,
} from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { SvcApiError } from './errors.js';
import type { ListItem, ListPath, Paths } from './paths.js';
import { DEFAULT_RETRY_POLICY, retryingFetch, type RetryPolicy } from './retry.js';

export interface ClientOptions extends Partial<RetryPolicy> {
  /** The REST base URL, `/v1` included: `http://localhost:8080/v1`. */
  baseUrl: string;
  /** A secret key (`svc_sk_...`), sent as `Authorization: Bearer <key>`. */
  key: string;
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

/** A 2xx answer: its body, its ETag (for If-Match on the next change) and the response itself. */
export interface Result<Data> {
  data: Data;
  etag: string | undefined;
  response: Response;
}

/**
 * The options of one call, optional when none of them is required. Unlike openapi-fetch's own signature, the options
 * are not a type parameter inferred from the call and have no index signature, so TypeScript checks the object
 * literal for excess properties: a misspelled or unknown field (in `body`, `params` or the options themselves) is a
 * compile error, as a wrong type is. Only `parseAs` is inferred, for the type of `data`.
 */
type InitParam<Init, As extends ParseAs> =
  RequiredKeysOf<Exclude<Init, undefined>> extends never
    ? [(Exclude<Init, undefined> & { parseAs?: As })?]
    : [Exclude<Init, undefined> & { parseAs?: As }];

type Operation<T> = T extends Record<string | number, unknown> ? T : never;

type Method<M extends HttpMethod> = <P extends PathsWithMethod<Paths, M>, As extends ParseAs = 'json'>(
  url: P,
  ...init: InitParam<MaybeOptionalInit<Paths[P], M>, As>
) => Promise<
  Result<Exclude<FetchResponse<Operation<Paths[P][M]>, { parseAs: As }, `${string}/${string}`>['data'], undefined>>
>;

/**
 * Every documented route, typed from the OpenAPI document (openapi-fetch's call shape: path, then `params` and
 * `body`). A call resolves with a 2xx answer and rejects with SvcApiError otherwise.
 */
export interface SvcClient {
  GET: Method<'get'>;
  POST: Method<'post'>;
  PUT: Method<'put'>;
  PATCH: Method<'patch'>;
  DELETE: Method<'delete'>;
  /** Every item of a list, page after page (`limit` sets the page size; filters apply to every page). */
  list<P extends ListPath>(
    url: P,
    ...init: InitParam<MaybeOptionalInit<Paths[P], 'get'>, 'json'>
  ): AsyncGenerator<ListItem<P>, void, undefined>;
}

/** A fresh Idempotency-Key for every POST and PUT that has none (a route that takes none ignores it). */
const idempotencyKeys: Middleware = {
  onRequest({ request }) {
    if ((request.method === 'POST' || request.method === 'PUT') && !request.headers.has('idempotency-key'))
      request.headers.set('Idempotency-Key', crypto.randomUUID());
    return request;
  },
};

type Init = { params?: { query?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
type Send = (url: string, init?: Init) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export function createClient(options: ClientOptions): SvcClient {
  const policy: RetryPolicy = {
    retries: options.retries ?? DEFAULT_RETRY_POLICY.retries,
    maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? DEFAULT_RETRY_POLICY.maxRetryAfterSeconds,
  };
  const api = createFetchClient<Paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.key}` },
    fetch: retryingFetch(options.fetch ?? ((request) => fetch(request)), policy),
  });
  api.use(idempotencyKeys);

  const method = (name: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') => {
    const send = api[name] as unknown as Send;
    return async (url: string, init?: Init): Promise<Result<unknown>> => {
      const { data, error, response } = await send(url, init);
      if (!response.ok) throw new SvcApiError(response, error);
      return { data, etag: response.headers.get('etag') ?? undefined, response };
    };
  };
  const get = method('GET');

  async function* list(url: string, init?: Init): AsyncGenerator<unknown, void, undefined> {
    let cursor: string | null = null;
    do {
      const query = { ...init?.params?.query, ...(cursor === null ? {} : { cursor }) };
      const { data } = await get(url, { ...init, params: { ...init?.params, query } });
      const page = data as { data: unknown[]; next_cursor: string | null };
      yield* page.data;
      cursor = page.next_cursor;
    } while (cursor !== null);
  }

  return {
    GET: get,
    POST: method('POST'),
    PUT: method('PUT'),
    PATCH: method('PATCH'),
    DELETE: method('DELETE'),
    list,
  } as unknown as SvcClient;
}
