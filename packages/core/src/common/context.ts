import type { EntityManager } from 'typeorm';

/** Who is calling: the team of the authenticated key and the key itself (the paying key for charged work). */
export interface Actor {
  readonly teamId: string;
  readonly keyId: string;
  /** The feature-flag environments the key administers; null or absent: every environment of its team. */
  readonly environmentIds?: readonly string[] | null;
}

/**
 * A unit of work. When a transport opens a transaction (for idempotency), services run inside it so the
 * work and its idempotency record commit together.
 */
export interface CallContext {
  readonly actor: Actor;
  readonly tx?: EntityManager;
}
