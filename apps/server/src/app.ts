import fastifyApollo from '@as-integrations/fastify';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { LOG_SERIALIZERS, redactRequestUrl, type Services } from '@svc/core';
import type { ServerConfig } from './config.js';
import { createGraphqlServer, graphqlContext, GRAPHQL_PATH } from './graphql/server.js';
import { answerClientError, sendError } from './rest/errors.js';
import { apiIndex, platformIndex } from './rest/routes/discovery.js';
import { AllowedMethods } from './rest/allowed-methods.js';
import { buildOpenApi } from './rest/openapi.js';
import { checkSvcMode, MAX_BODY_BYTES, registerRoute } from './rest/pipeline.js';
import { newRequestId } from './rest/request-id.js';
import { traceRequests } from './request-tracing.js';
import { REST_PREFIX, type RouteSpec, type UnauthenticatedRouteSpec } from './rest/route.js';
import { catalogRoutes } from './rest/routes/catalog.routes.js';
import { endpointRoutes } from './rest/routes/endpoints.routes.js';
import { streamTokenRoutes } from './rest/routes/stream-tokens.routes.js';
import { streamRoutes } from './rest/routes/stream.routes.js';
import { StreamHub } from './streams/stream-hub.js';
import { messageRoutes } from './rest/routes/messages.routes.js';
import { deliveryRoutes } from './rest/routes/deliveries.routes.js';
import { eventRoutes } from './rest/routes/events.routes.js';
import { endpointTestRoutes } from './rest/routes/endpoint-test.routes.js';
import { eventTypeRoutes } from './rest/routes/event-types.routes.js';
import { tenantRoutes } from './rest/routes/tenants.routes.js';
import { portalSessionRoutes } from './rest/routes/portal-sessions.routes.js';
import { receiveRoute, sourceRoutes } from './rest/routes/sources.routes.js';
import { analyticsRoutes } from './rest/routes/analytics.routes.js';
import { usageRoutes } from './rest/routes/usage.routes.js';
import { replayRoutes } from './rest/routes/replays.routes.js';
import { platformRoutes } from './rest/routes/platform/platform.routes.js';

export { REST_PREFIX };

export function restRoutes(services: Services, publicBaseUrl: string): RouteSpec[] {
  return [
    ...catalogRoutes(services),
    ...tenantRoutes(services),
    ...portalSessionRoutes(services),
    ...eventTypeRoutes(services),
    ...endpointRoutes(services),
    ...streamTokenRoutes(services),
    ...messageRoutes(services),
    ...deliveryRoutes(services),
    ...eventRoutes(services),
    ...endpointTestRoutes(services),
    ...sourceRoutes(services, publicBaseUrl),
    ...analyticsRoutes(services),
    ...usageRoutes(services),
    ...replayRoutes(services),
    ...platformRoutes(services),
  ];
}

/**
 * Routes without a key: the receive route, authenticated by the provider's signature, and a stream endpoint's stream
 * and acknowledgements, authenticated by its stream token.
 */
export function unauthenticatedRoutes(
  services: Services,
  publicBaseUrl: string,
  hub: StreamHub,
): UnauthenticatedRouteSpec[] {
  return [receiveRoute(services, publicBaseUrl), ...streamRoutes(services, hub)];
}

export interface BuiltApp {
  app: FastifyInstance;
  routes: RouteSpec[];
  /** Routes a provider signature authenticates (POST /receive/{token}). */
  unauthenticated: UnauthenticatedRouteSpec[];
  /** Every route the HTTP server serves, as `METHOD /path` (what the OpenAPI test holds the document to). */
  served: string[];
  /** The streams this process holds (stream endpoints). */
  streams: StreamHub;
}

/** Request logs without secrets: the receive token is redacted; errors go through the shared serializer. */
function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactRequestUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
  };
}

/**
 * Discovery documents served under /v1 besides the declared routes: the API index, the platform API index and
 * the OpenAPI document. They need no key and are not operations of the API, so the OpenAPI document leaves them
 * out.
 */
/** Node's default limit of the request line and headers (--max-http-header-size). */
const MAX_HEADER_BYTES = 16_384;

export const DISCOVERY_PATHS = [REST_PREFIX, `${REST_PREFIX}/platform`, `${REST_PREFIX}/openapi.json`] as const;

export async function buildApp(
  services: Services,
  config: ServerConfig,
  baseLogger: FastifyBaseLogger,
): Promise<BuiltApp> {
  const logger = baseLogger.child({}, { serializers: { ...LOG_SERIALIZERS, req: serializeRequest } });
  const app = Fastify({
    loggerInstance: logger,
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: MAX_BODY_BYTES,
    // request.ip is the client named by X-Forwarded-For only through these proxies; otherwise the peer's address.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // Path parameters are checked by their own rules (an ID by its shape: 404; a flag key: 422), so the router takes
    // any length a request line can have (Node refuses headers over 16 KiB) instead of answering 414 itself.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_HEADER_BYTES },
    // Every answer has the API's error body and a Request-Id, also those of the router and of Node's HTTP parser.
    frameworkErrors: (error, request, reply) => {
      sendError(request, reply, error);
    },
    clientErrorHandler: (error, socket) => answerClientError(logger, error, socket),
  });
  traceRequests(app);
  // Errors outside the REST routes (a /graphql body that is not JSON) get the API's error body too.
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  const served: string[] = [];
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') served.push(`${method} ${route.url}`);
    allowed.add(route.url, [route.method].flat());
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('Request-Id', request.id);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) =>
    (await services.ready()) ? { status: 'ready' } : reply.code(503).send({ status: 'unavailable' }),
  );
  // Prometheus scrapes without a key (bind or firewall it like /healthz); it holds counts, never IDs or URLs.
  app.get('/metrics', async (_request, reply) =>
    reply.type(services.metrics.registry.contentType).send(await services.metrics.registry.metrics()),
  );

  const routes = restRoutes(services, config.publicBaseUrl);
  const streams = new StreamHub(services, config.streams, `${config.publicBaseUrl}${REST_PREFIX}`, logger);
  // Streams end first (their leases go back for the next connection), before the pool closes.
  app.addHook('preClose', async () => streams.close());
  const unauthenticated = unauthenticatedRoutes(services, config.publicBaseUrl, streams);
  const openApi = buildOpenApi(routes, `${config.publicBaseUrl}${REST_PREFIX}`, unauthenticated);

  await app.register(
    async (rest) => {
      // Bodies are kept as bytes: the pipeline parses them strictly (duplicate keys, exact text).
      rest.removeAllContentTypeParsers();
      rest.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (request, body, done) => {
        request.rawBody = body as Buffer;
        done(null, undefined);
      });
      rest.addHook('onRequest', async (request) => {
        checkSvcMode(request.headers['svc-mode']);
      });
      rest.setErrorHandler((error, request, reply) => sendError(request, reply, error));
      rest.setNotFoundHandler((request, reply) => allowed.refuse(request, reply));
      rest.get('/openapi.json', async () => openApi);
      const index = apiIndex(routes, config.publicBaseUrl, REST_PREFIX);
      rest.route({ method: 'GET', url: '/', prefixTrailingSlash: 'no-slash', handler: async () => index });
      const platform = platformIndex(config.publicBaseUrl, REST_PREFIX, routes);
      rest.get('/platform', async () => platform);
      for (const route of [...routes, ...unauthenticated]) registerRoute(rest, route, { services, config });
    },
    { prefix: REST_PREFIX },
  );

  const apollo = await createGraphqlServer(app, logger, config.publicBaseUrl);
  await apollo.start();
  await app.register(fastifyApollo(apollo), { path: GRAPHQL_PATH, context: graphqlContext(services) });
  app.setNotFoundHandler((request, reply) => allowed.refuse(request, reply));
  return { app, routes, unauthenticated, served, streams };
}
