import type { Actor, CallContext, Services } from '@svc/core';
import type { PublicLimits } from '../public-limits.js';
import type { Loaders } from './loaders.js';

export interface GraphqlContext {
  services: Services;
  authorization: string | undefined;
  /** The client's address (through the proxies SVC_TRUSTED_PROXIES names), for the public mutations' limits. */
  clientAddress: string;
  /** This process's limits of the public mutations (sign-in, portal links), shared by its requests. */
  publicLimits: PublicLimits;
  /** Set by the auth checker once the key is verified. */
  actor?: Actor;
  /** The batch loaders of the per-parent fields, for this request only; made with the actor. */
  loaders?: Loaders;
}

export function callContext(context: GraphqlContext): CallContext {
  if (!context.actor) throw new Error('resolver reached without @Authorized');
  return { actor: context.actor };
}

/** The request's batch loaders (per-parent fields are reached only below an authorized root field). */
export function loadersOf(context: GraphqlContext): Loaders {
  if (!context.loaders) throw new Error('field reached without an authorized root field');
  return context.loaders;
}
