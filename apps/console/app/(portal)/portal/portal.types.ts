/** The shapes the portal reads from the API's portal* fields (docs/portal.md). */

export interface PortalBranding {
  displayName: string | null;
  accentColor: string | null;
  logoUrl: string | null;
}

export interface PortalContext {
  tenantName: string;
  session: {
    id: string;
    capabilities: 'read_only' | 'manage_endpoints';
    eventTypes: string[] | null;
    branding: PortalBranding;
    expiresAt: string;
    spendingCapUsd: string;
    spentUsd: string;
  };
}

export interface PortalEndpointHealth {
  circuit: string;
  consecutiveFailures: number;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  nextProbeAt: string | null;
}

export interface PortalEndpoint {
  id: string;
  url: string;
  name: string;
  description: string;
  events: string[];
  filter: string | null;
  headers: string[];
  status: 'enabled' | 'paused' | 'disabled';
  disabledReason: string | null;
  signatureScheme: 'hmac' | 'ed25519';
  publicKey: string | null;
  etag: string;
  health: PortalEndpointHealth;
}

export interface PortalEventType {
  name: string;
  description: string;
  example: string | null;
}

export interface PortalAttempt {
  id: string;
  number: number;
  trigger: string;
  startedAt: string;
  statusCode: number | null;
  errorKind: string | null;
  durationMs: number;
  responseBody: string | null;
}

export interface PortalDelivery {
  id: string;
  messageId: string;
  endpointId: string;
  eventType: string;
  kind: string;
  status: string;
  attemptCount: number;
  lastStatusCode: number | null;
  createdAt: string;
  replayOf: string | null;
  attempts?: { nodes: PortalAttempt[] };
}

export interface PortalMessage {
  id: string;
  eventType: string;
  status: string;
  createdAt: string;
  deliveries?: { nodes: PortalDelivery[] };
}
