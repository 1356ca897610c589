import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Actor, CallContext, IdempotentResult, RateClass as CoreRateClass, RunOnceOutcome } from '@svc/core';
import type { z } from 'zod';

/** Where the REST routes are mounted. */
export const REST_PREFIX = '/v1';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type RateClass = CoreRateClass | 'none';

/**
 * How a route authenticates, which the pipeline dispatches on:
 * - `secret_key`: a bearer svc_sk_ key; the pipeline resolves the Actor and takes the team's rate token.
 * - `source_signature`: the receive route; the token in the path names a source and the provider's signature
 *   authenticates the request, both checked by the service (which also takes the source's rate token).
 * - `public`: no credentials at all (discovery documents).
 * - `stream_token`: a stream endpoint's bearer whst_ token, checked by the handler (its stream and acks only).
 */
export type RouteAuth = 'secret_key' | 'source_signature' | 'public' | 'stream_token';

/** What a route without a key gets: the request as sent, bytes and headers untouched. */
export interface UnauthenticatedRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** The body exactly as received (signatures are over these bytes). */
  rawBody: Buffer;
  /** The headers as received, [name, value, ...]: a header sent twice shows twice. */
  rawHeaders: readonly string[];
  /** The path and query as called. */
  url: string;
  /** The client's address (behind trusted proxies, the one they name). */
  remoteAddress: string;
}

export interface RouteRequest<I> {
  ctx: CallContext;
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** The request body parsed by the route's input schema (defaults applied). */
  input: I;
  /** The raw JSON body (RawJson for the route's raw fields). */
  body: Record<string, unknown>;
  /** The If-Match ETag, for routes that require one. */
  ifMatch: string;
}

/** What the pipeline sends for an executed idempotent request: the result and its encoded body. */
export interface KeptResult {
  result: RouteResult;
  encoded: Buffer | null;
}

/** An idempotent request's key and fingerprint, and how its result becomes the response kept for replays. */
export interface RouteIdempotency {
  key: string;
  fingerprint: string;
  keep(result: RouteResult): IdempotentResult<KeptResult>;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Bytes sent as they are (GET /messages/{id}/content), with their content type, instead of a JSON body. */
  raw?: Buffer;
  contentType?: string;
  /**
   * The route writes the answer itself, for as long as it lasts (a Server-Sent Events stream): the pipeline hands
   * over the raw request and response instead of sending `status` and a body.
   */
  takeOver?: (request: IncomingMessage, response: ServerResponse) => void;
}

/**
 * A REST route declares its shape once: the pipeline enforces the common rules from it and the OpenAPI
 * document is generated from it.
 */
interface RouteBase {
  operationId: string;
  summary: string;
  method: HttpMethod;
  /** Fastify path syntax relative to /v1, e.g. /tenants/:id */
  path: string;
  /** Query parameters, for the API description. */
  query?: z.ZodType;
  responses: Record<number, z.ZodType | null>;
  /** Statuses whose body is raw bytes of any content type (declare them as null in responses). */
  rawResponses?: readonly number[];
}

/** A route that needs no secret key: no idempotency, If-Match or JSON body rules; the handler sees raw bytes. */
export interface UnauthenticatedRouteSpec extends RouteBase {
  auth: 'source_signature' | 'public' | 'stream_token';
  /** The JSON body the handler parses itself, for the API description. */
  input?: z.ZodType;
  /** Statuses answered as a text/event-stream (declare them as null in responses). */
  eventStreams?: readonly number[];
  rateClass: 'none';
  handler(request: UnauthenticatedRequest): Promise<RouteResult & { contentType?: string; raw?: Buffer }>;
}

export interface RouteSpec<I = unknown> extends RouteBase {
  auth: 'secret_key';
  rateClass: RateClass;
  /** POST routes that require Idempotency-Key. */
  idempotent?: boolean;
  /** An idempotent route's requests that store nothing (POST /replays with dry_run): no key needed or used. */
  storesNothing?(body: Record<string, unknown>): boolean;
  /** Routes that require If-Match (true), or honour it when sent ('optional': the service decides when it is needed). */
  ifMatch?: boolean | 'optional';
  /** The If-Match value is part of the request an idempotent retry must repeat (with the body). */
  comparesIfMatch?: boolean;
  /** Request body schema (also parses and defaults the input before an idempotency key is claimed). */
  input?: z.ZodType<I>;
  /** Top-level body fields kept as their exact JSON text. */
  rawFields?: readonly string[];
  handler(request: RouteRequest<I>): Promise<RouteResult>;
  /**
   * Idempotent routes whose service keeps the Idempotency-Key's lock and record itself, in the transaction of its
   * own work (message admission batches them), with the rules of IdempotencyService.runOnce; the pipeline then uses
   * this instead of the handler in a runOnce transaction.
   */
  runIdempotent?(request: RouteRequest<I>, idempotency: RouteIdempotency): Promise<RunOnceOutcome<KeptResult>>;
  /** The body kept for idempotent replays when it must differ from the one sent (a secret is never stored). */
  storedBody?(result: RouteResult): unknown;
  /** Rebuilds a replayed body from the stored one (e.g. shows a still-current secret to the key that made it). */
  replayBody?(stored: Buffer, replay: { actor: Actor; sameKey: boolean }): Promise<Buffer>;
}

export function defineRoute<I>(spec: RouteSpec<I>): RouteSpec<I> {
  return spec;
}

export function defineUnauthenticatedRoute(spec: UnauthenticatedRouteSpec): UnauthenticatedRouteSpec {
  return spec;
}

export type AnyRouteSpec = RouteSpec | UnauthenticatedRouteSpec;
