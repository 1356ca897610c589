import type { PortalCapabilities } from './portal-session.inputs.js';

export type PortalSessionStatus = 'active' | 'expired' | 'revoked' | 'ended';

export interface PortalBranding {
  displayName: string | null;
  accentColor: string | null;
  logoUrl: string | null;
}

/** What reads show of a portal session (never a token: only their hashes are stored). */
export interface PortalSessionView {
  id: string;
  tenantId: string;
  capabilities: PortalCapabilities;
  /** null: every active event type of the team. */
  eventTypes: string[] | null;
  branding: PortalBranding;
  spendingCapMicros: bigint;
  spentMicros: bigint;
  /** active; expired; revoked (by the operator or sign-out); ended (its tenant deleted or its key revoked). */
  status: PortalSessionStatus;
  createdAt: Date;
  expiresAt: Date;
  openedAt: Date | null;
  revokedAt: Date | null;
  lastSeenAt: Date | null;
}

export interface PortalSessionRow {
  id: string;
  tenant_id: string;
  capabilities: PortalCapabilities;
  event_types: string[] | null;
  display_name: string | null;
  accent_color: string | null;
  logo_url: string | null;
  spending_cap_micros: string;
  spent_micros: string;
  created_at: Date;
  expires_at: Date;
  opened_at: Date | null;
  revoked_at: Date | null;
  last_seen_at: Date | null;
  /** The tenant is deleted or the creating key no longer acts. */
  ended: boolean;
}

export function toPortalSessionView(row: PortalSessionRow, now: Date): PortalSessionView {
  const status: PortalSessionStatus =
    row.revoked_at !== null
      ? 'revoked'
      : row.ended
        ? 'ended'
        : row.expires_at.getTime() <= now.getTime()
          ? 'expired'
          : 'active';
  return {
    id: row.id,
    tenantId: row.tenant_id,
    capabilities: row.capabilities,
    eventTypes: row.event_types,
    branding: { displayName: row.display_name, accentColor: row.accent_color, logoUrl: row.logo_url },
    spendingCapMicros: BigInt(row.spending_cap_micros),
    spentMicros: BigInt(row.spent_micros),
    status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    openedAt: row.opened_at,
    revokedAt: row.revoked_at,
    lastSeenAt: row.last_seen_at,
  };
}
