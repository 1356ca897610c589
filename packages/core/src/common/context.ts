import type { EntityManager } from 'typeorm';

/** Who is calling: the team of the authenticated key and the key itself (the paying key for charged work). */
export interface Actor {
  readonly teamId: string;
  readonly keyId: string;
  /** The feature-flag environments the key administers; null or absent: every environment of its team. */
  readonly environmentIds?: readonly string[] | null;
  /**
   * Set when a receivers' portal session acts (docs/portal.md): the key above is the one that created the session
   * (it pays), and the session reaches only this tenant through the portal's own operations.
   */
  readonly portal?: PortalScope;
}

/** What a portal session may reach: one tenant, with a capability set and optionally some event types only. */
export interface PortalScope {
  readonly sessionId: string;
  readonly tenantId: string;
  readonly capabilities: 'read_only' | 'manage_endpoints';
  /** null: every active event type of the team. */
  readonly eventTypes: readonly string[] | null;
}

/**
 * A unit of work. When a transport opens a transaction (for idempotency), services run inside it so the
 * work and its idempotency record commit together.
 */
export interface CallContext {
  readonly actor: Actor;
  readonly tx?: EntityManager;
}
