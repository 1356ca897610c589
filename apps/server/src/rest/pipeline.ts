import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_MAX_DEPTH, decodeUtf8Strict, JsonSyntaxError, parseStrict, toValue, type JsonNode } from '@svc/json';
import {
  parseInput,
  RawJson,
  type IdempotentResult,
  requestFingerprint,
  requireIfMatch,
  ServiceError,
  validateIdempotencyKey,
  type Services,
} from '@svc/core';
import type { ServerConfig } from '../config.js';
import { checkPathIds, pathIdKinds } from './path-params.js';
import { enforceRateLimit } from './rate-limit.js';
import { etagSource } from './routes/discovery.js';
import { plainValue, renderJson } from './render.js';
import {
  REST_PREFIX,
  type AnyRouteSpec,
  type KeptResult,
  type RouteResult,
  type RouteSpec,
  type UnauthenticatedRouteSpec,
} from './route.js';

export const MAX_BODY_BYTES = 1_048_576;

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
  }
}

/** Svc-Mode: omitted or live; test gives 422 unsupported_mode; anything else 422 invalid_field. First check of all. */
export function checkSvcMode(header: string | string[] | undefined): void {
  if (header === undefined) return;
  if (header === 'live') return;
  if (header === 'test')
    throw new ServiceError('unsupported_mode', 'test mode is not supported; omit Svc-Mode or send live');
  throw new ServiceError('invalid_field', 'Svc-Mode must be live', { field: 'Svc-Mode' });
}

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => p === '' || /^charset="?utf-8"?$/.test(p));
}

/** Strict body parsing: JSON objects only, duplicate keys rejected, raw fields kept as their exact text. */
export function parseBody(request: FastifyRequest, rawFields: readonly string[] = []): Record<string, unknown> {
  return parseJsonBody(request.rawBody, request.headers['content-type'], rawFields);
}

/** parseBody's rules for a body already read (the routes without a key get their bytes as received). */
export function parseJsonBody(
  bytes: Buffer | undefined,
  contentType: string | undefined,
  rawFields: readonly string[] = [],
): Record<string, unknown> {
  if (!bytes || bytes.length === 0) return {};
  if (!isJsonContentType(contentType))
    throw new ServiceError('unsupported_media_type', 'request bodies must be application/json');
  let source: string;
  let node: JsonNode;
  try {
    source = decodeUtf8Strict(bytes);
    node = parseStrict(source);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new ServiceError('invalid_json', jsonSyntaxMessage('the body', error));
    throw error;
  }
  if (node.kind !== 'object') throw new ServiceError('invalid_json', 'the body must be a JSON object');
  const body = toValue(node) as Record<string, unknown>;
  for (const member of node.members) {
    // JSON null stays null, so `null` clears a raw field the same way everywhere.
    if (rawFields.includes(member.key) && member.value.kind !== 'null')
      body[member.key] = new RawJson(source.slice(member.value.start, member.value.end));
  }
  return body;
}

/** What is wrong with JSON text, for an error message about `what` ("the body", "payload"). */
export function jsonSyntaxMessage(what: string, error: JsonSyntaxError): string {
  if (error.reason === 'duplicate_key') return `${what} has a duplicate key`;
  if (error.reason === 'too_deep')
    return `${what} is nested too deeply: arrays and objects nest at most ${DEFAULT_MAX_DEPTH} levels`;
  return `${what} is not valid JSON`;
}

export interface PipelineDeps {
  services: Services;
  config: ServerConfig;
}

function send(
  reply: FastifyReply,
  route: RouteSpec,
  result: RouteResult,
  body: Buffer | null,
  validate: boolean,
): FastifyReply {
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
  if (result.raw !== undefined) return reply.type(result.contentType ?? 'application/octet-stream').send(result.raw);
  if (body === null) return reply.send();
  if (validate) assertMatchesSchema(route, result);
  return reply.type('application/json; charset=utf-8').send(body);
}

function assertMatchesSchema(route: RouteSpec, result: RouteResult): void {
  const schema = route.responses[result.status];
  if (schema === undefined) throw new Error(`${route.operationId}: status ${result.status} is not declared`);
  if (schema === null) return;
  const parsed = schema.safeParse(plainValue(result.body));
  if (!parsed.success)
    throw new Error(
      `${route.operationId}: response does not match its schema: ${JSON.stringify(parsed.error.issues[0])}`,
    );
}

function encodeBody(result: RouteResult): Buffer | null {
  return result.body === undefined ? null : Buffer.from(renderJson(result.body), 'utf8');
}

/**
 * Registers one declared route with the common rules, in the order the spec and docs/api-choices.md give,
 * dispatching on how the route authenticates.
 */
export function registerRoute(app: FastifyInstance, route: AnyRouteSpec, deps: PipelineDeps): void {
  if (route.auth === 'secret_key') registerKeyRoute(app, route, deps);
  else registerUnauthenticatedRoute(app, route);
}

/**
 * Routes without a key (the receive route, discovery): Svc-Mode still comes first (the /v1 hook), then the
 * handler gets the bytes as received; it authenticates (a provider signature) and rate-limits by itself.
 */
function registerUnauthenticatedRoute(app: FastifyInstance, route: UnauthenticatedRouteSpec): void {
  app.route({
    method: route.method,
    url: route.path,
    handler: async (request, reply) => {
      const result = await route.handler({
        params: request.params as Record<string, string>,
        query: request.query as Record<string, unknown>,
        headers: request.headers,
        rawBody: request.rawBody ?? Buffer.alloc(0),
        rawHeaders: request.raw.rawHeaders,
        url: request.url,
        remoteAddress: request.ip,
      });
      if (result.takeOver) {
        reply.hijack();
        reply.raw.setHeader('Request-Id', request.id);
        result.takeOver(request.raw, reply.raw);
        return reply;
      }
      reply.code(result.status);
      for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
      if (result.raw !== undefined)
        return reply.type(result.contentType ?? 'application/octet-stream').send(result.raw);
      const body = encodeBody(result);
      return body === null ? reply.send() : reply.type('application/json; charset=utf-8').send(body);
    },
  });
}

/** Methods whose requests carry a JSON body. */
export function hasRequestBody(route: { method: string }): boolean {
  return route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
}

function registerKeyRoute(app: FastifyInstance, route: RouteSpec, deps: PipelineDeps): void {
  const idKinds = pathIdKinds(route.path);
  app.route({
    method: route.method,
    url: route.path,
    handler: async (request, reply) => {
      const actor = await deps.services.auth.authenticate(request.headers.authorization);
      await enforceRateLimit(deps.services, actor, route.rateClass);
      const body = hasRequestBody(route) ? parseBody(request, route.rawFields) : {};
      const ifMatchHeader = request.headers['if-match'];
      const ifMatch =
        route.ifMatch === true || (route.ifMatch === 'optional' && ifMatchHeader !== undefined)
          ? requireIfMatch(ifMatchHeader, etagSource(REST_PREFIX, route.path))
          : '';
      const idempotencyKey =
        route.idempotent && !route.storesNothing?.(body)
          ? validateIdempotencyKey(request.headers['idempotency-key'])
          : null;
      const input = route.input ? parseInput(route.input, body) : undefined;
      const params = request.params as Record<string, string>;
      checkPathIds(idKinds, params);
      const query = request.query as Record<string, unknown>;

      if (idempotencyKey === null) {
        const result = await route.handler({ ctx: { actor }, params, query, input, body, ifMatch });
        return send(reply, route, result, encodeBody(result), deps.config.validateResponses);
      }

      const fingerprint = requestFingerprint(
        route.operationId,
        params,
        route.comparesIfMatch ? { body: input ?? body, if_match: ifMatch } : (input ?? body),
      );
      const keep = (result: RouteResult): IdempotentResult<KeptResult> => {
        const encoded = encodeBody(result);
        const stored = route.storedBody ? encodeBody({ ...result, body: route.storedBody(result) }) : encoded;
        return {
          response: { status: result.status, headers: result.headers ?? {}, body: stored },
          value: { result, encoded },
        };
      };
      const run = route.runIdempotent
        ? await route.runIdempotent(
            { ctx: { actor }, params, query, input, body, ifMatch },
            { key: idempotencyKey, fingerprint, keep },
          )
        : await deps.services.idempotency.runOnce(actor, idempotencyKey, fingerprint, async (tx) =>
            keep(await route.handler({ ctx: { actor, tx }, params, query, input, body, ifMatch })),
          );
      if (run.outcome === 'executed')
        return send(reply, route, run.value.result, run.value.encoded, deps.config.validateResponses);
      reply.header('Idempotency-Replayed', 'true');
      const { response } = run;
      const replayed =
        response.body && route.replayBody
          ? await route.replayBody(response.body, { actor, sameKey: response.keyId === actor.keyId })
          : response.body;
      return send(reply, route, { status: response.status, headers: response.headers }, replayed, false);
    },
  });
}
