import type { Actor, CallContext } from '@svc/core';
import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type RateClass = 'read' | 'config_write' | 'none';

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

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * A REST route declares its shape once: the pipeline enforces the common rules from it and the OpenAPI
 * document is generated from it.
 */
export interface RouteSpec<I = unknown> {
  operationId: string;
  summary: string;
  method: HttpMethod;
  /** Fastify path syntax relative to /v1, e.g. /tenants/:id */
  path: string;
  auth: 'secret_key';
  rateClass: RateClass;
  /** POST routes that require Idempotency-Key. */
  idempotent?: boolean;
  /** Routes that require If-Match. */
  ifMatch?: boolean;
  /** Request body schema (also parses and defaults the input before an idempotency key is claimed). */
  input?: z.ZodType<I>;
  /** Top-level body fields kept as their exact JSON text. */
  rawFields?: readonly string[];
  /** Query parameters, for the API description. */
  query?: z.ZodType;
  responses: Record<number, z.ZodType | null>;
  handler(request: RouteRequest<I>): Promise<RouteResult>;
  /** The body kept for idempotent replays when it must differ from the one sent (a secret is never stored). */
  storedBody?(result: RouteResult): unknown;
  /** Rebuilds a replayed body from the stored one (e.g. shows a still-current secret to the key that made it). */
  replayBody?(stored: Buffer, replay: { actor: Actor; sameKey: boolean }): Promise<Buffer>;
}

export function defineRoute<I>(spec: RouteSpec<I>): RouteSpec<I> {
  return spec;
}
