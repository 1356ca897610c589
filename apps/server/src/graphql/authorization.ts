import type { GraphQLSchema } from 'graphql';
import { getMetadataStorage, type AuthChecker } from 'type-graphql';
import { portalTokenOf, ServiceError, type Actor } from '@svc/core';
import type { GraphqlContext } from './context.js';

/**
 * The role of a root field that needs no key: `@Authorized(PUBLIC)`. Every other root field declares
 * `@Authorized()` and runs only for a request with a valid secret key or console session.
 */
export const PUBLIC = 'public';

/**
 * The role of a root field of the receivers' portal: `@Authorized(PORTAL)`. Only a portal session (svc_ps_) reaches
 * it, and a portal session reaches nothing else (docs/portal.md).
 */
export const PORTAL = 'portal';

/**
 * What a root field declared: a key (or console session) is needed, a portal session is needed, nothing is needed,
 * or nothing was declared (a test refuses it).
 */
export type RootFieldAccess = 'key' | 'portal' | 'public' | 'undeclared';

type ResolverClass = ReturnType<typeof getMetadataStorage>['queries'][number]['target'];

const accessBySchema = new WeakMap<GraphQLSchema, Map<string, RootFieldAccess>>();

/** Declared access of every Query and Mutation field of the schema, keyed `Query.viewer`, `Mutation.createTenant`. */
export function rootFieldAccess(schema: GraphQLSchema): Map<string, RootFieldAccess> {
  const cached = accessBySchema.get(schema);
  if (cached) return cached;
  const storage = getMetadataStorage();
  const rolesOf = (target: ResolverClass, methodName: string): string[] | undefined =>
    storage.authorizedFields.find((a) => a.target === target && a.fieldName === methodName)?.roles ??
    storage.authorizedResolver.find((a) => a.target === target)?.roles;
  const access = new Map<string, RootFieldAccess>();
  const roots = [
    [schema.getQueryType(), storage.queries],
    [schema.getMutationType(), storage.mutations],
  ] as const;
  for (const [type, handlers] of roots) {
    if (!type) continue;
    for (const name of Object.keys(type.getFields())) {
      const declared = handlers
        .filter((handler) => handler.schemaName === name)
        .map((handler) => rolesOf(handler.target, handler.methodName));
      const kinds = declared.map((roles): RootFieldAccess => {
        if (roles === undefined) return 'undeclared';
        if (roles.includes(PORTAL)) return 'portal';
        return roles.includes(PUBLIC) ? 'public' : 'key';
      });
      // Several handlers of one name (not expected) must all agree; the strictest declaration wins.
      const kind: RootFieldAccess =
        kinds.includes('undeclared') || kinds.length === 0 || new Set(kinds).size > 1 ? 'undeclared' : kinds[0]!;
      access.set(`${type.name}.${name}`, kind);
    }
  }
  accessBySchema.set(schema, access);
  return access;
}

/**
 * How a GraphQL request proves its team: a secret key, a console session token (svc_cs_) or a portal session token
 * (svc_ps_), as a bearer token.
 */
export function authenticateRequest(context: GraphqlContext): Promise<Actor> {
  const portalToken = portalTokenOf(context.authorization);
  if (portalToken !== null) return context.services.portalSessions.authenticate(portalToken);
  return context.services.consoleSessions.authenticateConsole(context.authorization);
}

/**
 * A portal session reaches the portal's fields only; a key or console session never reaches them (it has no tenant
 * scope). Refused with 403 portal_access_denied.
 */
export function checkPortalSeparation(actor: Actor, roles: readonly string[]): void {
  const portalField = roles.includes(PORTAL);
  if (actor.portal && !portalField)
    throw new ServiceError('portal_access_denied', 'a portal session reaches only the portal operations');
  if (!actor.portal && portalField)
    throw new ServiceError('portal_access_denied', 'the portal operations need a portal session');
}

/**
 * The operation guard authenticated the request once, before any resolver; this only checks that it did (a
 * field reached without it is refused, never run anonymously).
 */
export const authChecker: AuthChecker<GraphqlContext, string> = ({ context }, roles) => {
  if (roles.includes(PUBLIC)) return true;
  if (!context.actor) throw new ServiceError('unauthorized', 'a valid secret key is required');
  checkPortalSeparation(context.actor, roles);
  return true;
};
