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
  const resource = /^\/[a-z_]+(\/:[A-Za-z_]+)?/.exec(path)?.[0] ?? path;
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

/**
 * The platform event subscription API (spec/event-subscriptions.md) is not built yet: its index says so and
 * lists what is coming, so the printed Platform API URL answers with something useful instead of a 404.
 */
const PLATFORM_ROUTES_COMING = [
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

/** GET /v1/platform. */
export function platformIndex(publicBaseUrl: string, prefix: string) {
  return {
    service: `${SERVICE_NAME}: platform API`,
    version: SERVICE_VERSION,
    description:
      'Event subscriptions: signed events the platform generates (feature flag events such as feature_flags.flag.updated) delivered to your HTTPS receivers, with delivery history and retries.',
    base_url: `${publicBaseUrl}${prefix}/platform`,
    status: 'not_yet_available',
    routes: [],
    coming: PLATFORM_ROUTES_COMING.map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return { method, path };
    }),
    webhook_api_url: `${publicBaseUrl}${prefix}`,
  };
}
