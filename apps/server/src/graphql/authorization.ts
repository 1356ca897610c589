import type { GraphQLSchema } from 'graphql';
import { getMetadataStorage, type AuthChecker } from 'type-graphql';
import { ServiceError, type Actor } from '@svc/core';
import type { GraphqlContext } from './context.js';

/**
 * The role of a root field that needs no key: `@Authorized(PUBLIC)`. Every other root field declares
 * `@Authorized()` and runs only for a request with a valid secret key or console session.
 */
export const PUBLIC = 'public';

/** What a root field declared: a key is needed, nothing is needed, or nothing was declared (a test refuses it). */
export type RootFieldAccess = 'key' | 'public' | 'undeclared';

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
        return roles.includes(PUBLIC) ? 'public' : 'key';
      });
      // Several handlers of one name (not expected) must all agree; the strictest declaration wins.
      const kind: RootFieldAccess =
        kinds.includes('undeclared') || kinds.length === 0 ? 'undeclared' : kinds.includes('key') ? 'key' : 'public';
      access.set(`${type.name}.${name}`, kind);
    }
  }
  accessBySchema.set(schema, access);
  return access;
}

/** How a GraphQL request proves its team: a secret key or a console session token (svc_cs_), as a bearer token. */
export function authenticateRequest(context: GraphqlContext): Promise<Actor> {
  return context.services.consoleSessions.authenticateConsole(context.authorization);
}

/**
 * The operation guard authenticated the request once, before any resolver; this only checks that it did (a
 * field reached without it is refused, never run anonymously).
 */
export const authChecker: AuthChecker<GraphqlContext, string> = ({ context }, roles) => {
  if (roles.includes(PUBLIC)) return true;
  if (!context.actor) throw new ServiceError('unauthorized', 'a valid secret key is required');
  return true;
};
