import { SERVICE_VERSION } from '@svc/core';
import type { RouteSpec } from '../route.js';

const SERVICE_NAME = 'Webhook delivery and capture service';

/** `/tenants/:id` as the API reference writes it: `/tenants/{id}`. */
export function documentedPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}');
}

/**
 * Where a route's If-Match value comes from: the ETag header of the resource's GET (`/endpoints/:id/resume` ->
 * `GET /v1/endpoints/{id}`), for the 428 message.
 */
export function etagSource(prefix: string, path: string): string {
  // The resource is the path up to its last parameter: actions (/resume, /rotate_secret) act on it.
  const resource = /^.*\/:[A-Za-z_]+/.exec(path)?.[0] ?? path;
  return `GET ${prefix}${documentedPath(resource)}`;
}

/** GET /v1: what a person or a client finds at the printed REST URL, offline. */
export function apiIndex(routes: readonly RouteSpec[], publicBaseUrl: string, prefix: string) {
  const base = `${publicBaseUrl}${prefix}`;
  return {
    service: SERVICE_NAME,
    version: SERVICE_VERSION,
    base_url: base,
    openapi_url: `${base}/openapi.json`,
    graphql_url: `${publicBaseUrl}/graphql`,
    platform_url: `${base}/platform`,
    authentication: 'Authorization: Bearer <secret key> on every route below',
    routes: routes.map((route) => ({
      method: route.method,
      path: documentedPath(route.path),
      operation_id: route.operationId,
      summary: route.summary,
    })),
  };
}

/** Where the platform API is mounted below the REST prefix ({meta_url} = {base_url}/platform). */
export const PLATFORM_PREFIX = '/platform';

/**
 * The platform API (spec/event-subscriptions.md, and GET /meta/usage of the webhook spec): its index lists the
 * routes it serves and any of the spec's routes not served (none now), so the printed Platform API URL answers with
 * something useful and true.
 */
const PLATFORM_SPEC_ROUTES = [
  'POST /event_subscriptions',
  'GET /event_subscriptions',
  'GET /event_subscriptions/{endpoint_id}',
  'PATCH /event_subscriptions/{endpoint_id}',
  'DELETE /event_subscriptions/{endpoint_id}',
  'POST /event_subscriptions/{endpoint_id}/rotate_secret',
  'POST /event_subscriptions/{endpoint_id}/test',
  'GET /event_subscriptions/{endpoint_id}/deliveries',
  'POST /event_subscriptions/{endpoint_id}/deliveries/{delivery_id}/retry',
  'GET /events',
  'GET /events/{event_id}',
  'GET /meta/usage',
] as const;

/** GET /v1/platform: `routes` are the declared routes under /platform, relative to the platform base URL. */
export function platformIndex(publicBaseUrl: string, prefix: string, routes: readonly RouteSpec[]) {
  const served = routes
    .filter((route) => route.path.startsWith(`${PLATFORM_PREFIX}/`))
    .map((route) => ({
      method: route.method,
      path: documentedPath(route.path.slice(PLATFORM_PREFIX.length)),
      operation_id: route.operationId,
      summary: route.summary,
    }));
  const coming = PLATFORM_SPEC_ROUTES.map((route) => {
    const [method, path] = route.split(' ') as [string, string];
    return { method, path };
  }).filter((route) => !served.some((s) => s.method === route.method && s.path === route.path));
  return {
    service: `${SERVICE_NAME}: platform API`,
    version: SERVICE_VERSION,
    description:
      'Feature flags (environments and flags) and event subscriptions: signed events the platform generates (feature_flags.flag.updated on every committed flag change) delivered in commit order to your HTTPS receivers or team chats, with a 30-day delivery history and retries. Usage: GET /meta/usage, units and USD per meter and per paying key in a billing month.',
    base_url: `${publicBaseUrl}${prefix}${PLATFORM_PREFIX}`,
    status: coming.length === 0 ? 'available' : served.length === 0 ? 'not_yet_available' : 'partially_available',
    authentication: 'Authorization: Bearer <secret key> on every route below',
    routes: served,
    coming,
    webhook_api_url: `${publicBaseUrl}${prefix}`,
  };
}
