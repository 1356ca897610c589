import type { Actor } from '../common/context.js';
import { ServiceError } from '../common/errors.js';

/** True when the key administers the environment: every key does, unless the admin CLI restricted it. */
export function administers(actor: Actor, environmentId: string): boolean {
  return !actor.environmentIds || actor.environmentIds.includes(environmentId);
}

/** 403 environment_access_denied naming the first environment the key may not administer. */
export function assertAdministers(actor: Actor, environmentIds: readonly string[]): void {
  const denied = environmentIds.find((id) => !administers(actor, id));
  if (denied !== undefined)
    throw new ServiceError('environment_access_denied', `this key may not administer environment ${denied}`, {
      resourceId: denied,
    });
}

/** Creating an environment is administering all of them: restricted keys may not. */
export function assertAdministersAll(actor: Actor): void {
  if (actor.environmentIds)
    throw new ServiceError(
      'environment_access_denied',
      'this key administers only some environments and may not create new ones',
    );
}
