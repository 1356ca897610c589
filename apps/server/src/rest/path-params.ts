import { ID_NOUNS, isWellFormedId, notFound, type IdKind } from '@svc/core';

/** The kind of ID an `:id` parameter names, by the collection before it (`/tenants/:id`). */
const COLLECTION_KINDS: Record<string, IdKind> = {
  tenants: 'tenant',
  event_types: 'eventType',
  endpoints: 'endpoint',
  messages: 'message',
  deliveries: 'delivery',
  sources: 'source',
  replays: 'replay',
  events: 'operationalEvent',
};

/** Named parameters of the platform API. */
const NAMED_KINDS: Record<string, IdKind> = {
  environment_id: 'environment',
  // The platform API calls an event subscription's ID endpoint_id (spec: event-subscriptions.md).
  endpoint_id: 'subscription',
  delivery_id: 'subscriptionDelivery',
  event_id: 'platformEvent',
  // A receivers' portal session (/tenants/{id}/portal_sessions/{session_id}).
  session_id: 'portalSession',
  // A stream endpoint's token (/endpoints/{id}/stream-tokens/{token_id}).
  token_id: 'streamToken',
};

/** Parameters that are not IDs: the service checks them itself (a flag key is 422, a receive token 404). */
const NOT_IDS = new Set(['flag_key', 'token']);

/**
 * The ID kind of each path parameter of a route, e.g. `{ id: 'tenant' }` for `/tenants/:id`. Throws for a
 * parameter it cannot classify, so a new route cannot skip the shape check by accident.
 */
export function pathIdKinds(path: string): Record<string, IdKind> {
  const kinds: Record<string, IdKind> = {};
  const segments = path.split('/');
  segments.forEach((segment, index) => {
    if (!segment.startsWith(':')) return;
    const name = segment.slice(1);
    if (NOT_IDS.has(name)) return;
    const kind = name === 'id' ? COLLECTION_KINDS[segments[index - 1] ?? ''] : NAMED_KINDS[name];
    if (kind === undefined) throw new Error(`${path}: no ID kind is known for the path parameter ${name}`);
    kinds[name] = kind;
  });
  return kinds;
}

/**
 * A path ID of the wrong shape (a NUL, a stray character, a 5,000-character segment) names nothing: it is answered
 * 404 not_found like an unknown ID, before any query.
 */
export function checkPathIds(kinds: Record<string, IdKind>, params: Record<string, string>): void {
  for (const [name, kind] of Object.entries(kinds)) {
    const value = params[name];
    if (value === undefined || !isWellFormedId(value, kind)) throw notFound(ID_NOUNS[kind]);
  }
}
