export interface EndpointHealth {
  /** closed (healthy), half_open (probing) or open (failing) */
  circuit: string;
  consecutiveFailures: number;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  nextProbeAt: string | null;
}

/** An endpoint as the API shows it: never the signing secret, header values or the authorization value. */
export interface Endpoint {
  id: string;
  tenantId: string;
  url: string;
  name: string;
  description: string;
  events: string[];
  /** The filter JSON exactly as written, or null. */
  filter: string | null;
  /** The transform JSON exactly as written, or null. */
  transform: string | null;
  transformVersion: string;
  /** enabled, paused or disabled */
  status: string;
  disabledReason: string | null;
  ratePerSecond: number;
  maxConcurrency: number;
  /** ordered: one delivery at a time, in admission order, each with Svc-Sequence. */
  ordering: EndpointOrdering;
  /** What a delivery that ends without success does to an ordered endpoint. */
  orderingOnFailure: OrderingOnFailure;
  retryDelaysSeconds: number[];
  timeoutSeconds: number;
  /** Lowercase names of the custom headers. */
  headers: string[];
  hasAuthorization: boolean;
  metadata: Record<string, string>;
  secretVersion: number;
  oldSecretExpiresAt: string | null;
  /** hmac: v1 signatures with a shared secret; ed25519: v1a signatures checked with `publicKey`. */
  signatureScheme: SignatureScheme;
  /** The current whpk_ public key of an ed25519 endpoint (not a secret); null for hmac. */
  publicKey: string | null;
  health: EndpointHealth;
  queuedCount: number;
  urlRevision: string;
  version: string;
  etag: string;
  createdAt: string;
  updatedAt: string;
}

export interface EndpointPage {
  nodes: Endpoint[];
  nextCursor: string | null;
}

export type SignatureScheme = 'hmac' | 'ed25519';
export type EndpointOrdering = 'none' | 'ordered';
export type OrderingOnFailure = 'continue' | 'hold';

/**
 * What create and rotate answer: the new signing secret, to be shown once and then forgotten; null for ed25519,
 * whose secret key is never shown (receivers use the endpoint's public key).
 */
export interface EndpointSecretReveal {
  endpoint: Endpoint;
  signingSecret: string | null;
}

/** Fields create and update share. Filter and transform are JSON text sent exactly as typed. */
export interface EndpointFields {
  url: string;
  name: string;
  description: string;
  events: string[];
  ratePerSecond: number;
  maxConcurrency: number;
  ordering: EndpointOrdering;
  orderingOnFailure: OrderingOnFailure;
  retryDelaysSeconds: number[];
  timeoutSeconds: number;
  metadata: Record<string, string>;
}

export interface CreateEndpointInput extends EndpointFields {
  tenantId: string;
  signatureScheme: SignatureScheme;
  status: 'enabled' | 'paused';
  filter: string | null;
  transform: string | null;
  headers: Record<string, string>;
  authorization: string | null;
}

/** An update: null clears filter, transform and authorization; an absent headers or authorization is kept. */
export interface EndpointChanges extends EndpointFields {
  filter: string | null;
  transform: string | null;
  headers?: Record<string, string>;
  authorization?: string | null;
}

export interface EndpointPreview {
  matches: boolean;
  /** endpoint_disabled, event_type_not_subscribed, filter_not_matched or transform_failed; null when it matches */
  reason: string | null;
  eventType: string | null;
  /** null when no event type was given. */
  eventTypeMatched: boolean | null;
  filterMatched: boolean;
  transformApplied: boolean;
  transformError: { field: string; message: string } | null;
  contentType: string;
  /** The exact bytes that would be delivered; null when the transform fails. */
  body: string | null;
  bodyBytes: number | null;
  deliveryUnits: number | null;
}

export const ENDPOINTS_PAGE_SIZE = 20;

/** The API's defaults for a new endpoint, shown in the form so the operator sees what they get. */
export const ENDPOINT_DEFAULTS = {
  events: ['*'],
  maxConcurrency: 3,
  ratePerSecond: 50,
  timeoutSeconds: 10,
  retryDelaysSeconds: [15, 60, 300, 900, 3600, 14400, 43200, 86400],
} as const;

/** How long an old signing secret keeps signing after a rotation, by default and at most. */
export const MAX_SECRET_OVERLAP_SECONDS = 86_400;
