import type { Actor, CallContext, Services } from '@svc/core';

export interface GraphqlContext {
  services: Services;
  authorization: string | undefined;
  /** Set by the auth checker once the key is verified. */
  actor?: Actor;
}

export function callContext(context: GraphqlContext): CallContext {
  if (!context.actor) throw new Error('resolver reached without @Authorized');
  return { actor: context.actor };
}
