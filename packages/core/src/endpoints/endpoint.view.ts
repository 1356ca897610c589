import type {
  DeliveryMode,
  EndpointEntity,
  EndpointOrdering,
  EndpointStatus,
  OrderingOnFailure,
  SignatureScheme,
} from './endpoint.entity.js';
import type { EndpointHealth, EndpointState } from './endpoint-state.js';

export type { EndpointHealth, EndpointState } from './endpoint-state.js';

/** What reads show of an endpoint: never the secret, header values or the authorization value. */
export interface EndpointView {
  id: string;
  tenantId: string;
  deliveryMode: DeliveryMode;
  /** Empty for a stream endpoint. */
  url: string;
  name: string;
  description: string;
  events: string[];
  /** Exact JSON text as written, or null. */
  filter: string | null;
  transform: string | null;
  transformVersion: string;
  status: EndpointStatus;
  disabledReason: string | null;
  ratePerSecond: number;
  maxConcurrency: number;
  ordering: EndpointOrdering;
  orderingOnFailure: OrderingOnFailure;
  retryDelaysSeconds: number[];
  timeoutSeconds: number;
  headerNames: string[];
  hasAuthorization: boolean;
  metadata: Record<string, string>;
  secretVersion: number;
  oldSecretExpiresAt: Date | null;
  signatureScheme: SignatureScheme;
  /** The current `whpk_` public key of an ed25519 endpoint (not a secret), else null. */
  publicKey: string | null;
  /**
   * Every ed25519 public key that signs now: the current one (expiresAt null), then the previous one while its
   * rotation overlap lasts (expiresAt: when it stops signing). Empty when no ed25519 key signs.
   */
  publicKeys: EndpointPublicKey[];
  health: EndpointHealth;
  queuedCount: number;
  urlRevision: string;
  version: string;
  etag: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface EndpointPublicKey {
  publicKey: string;
  /** When this key stops signing; null for the current key. */
  expiresAt: Date | null;
}

/**
 * A created or rotated endpoint with its new signing secret, shown this once; null for an ed25519 endpoint, whose
 * secret key is never shown (its public key is in the view).
 */
export interface EndpointWithSecret {
  endpoint: EndpointView;
  signingSecret: string | null;
}

export function toEndpointView(endpoint: EndpointEntity, state: EndpointState, now: Date, etag: string): EndpointView {
  const overlapping =
    endpoint.oldSecretExpiresAt && endpoint.oldSecretExpiresAt > now ? endpoint.oldSecretExpiresAt : null;
  const publicKeys: EndpointPublicKey[] = [];
  if (endpoint.publicKey) publicKeys.push({ publicKey: endpoint.publicKey, expiresAt: null });
  if (overlapping && endpoint.oldPublicKey)
    publicKeys.push({ publicKey: endpoint.oldPublicKey, expiresAt: overlapping });
  return {
    id: endpoint.id,
    tenantId: endpoint.tenantId,
    deliveryMode: endpoint.deliveryMode,
    url: endpoint.url,
    name: endpoint.name,
    description: endpoint.description,
    events: endpoint.events,
    filter: endpoint.filter,
    transform: endpoint.transform,
    transformVersion: endpoint.transformVersion,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason,
    ratePerSecond: endpoint.ratePerSecond,
    maxConcurrency: endpoint.maxConcurrency,
    ordering: endpoint.ordering,
    orderingOnFailure: endpoint.orderingOnFailure,
    retryDelaysSeconds: endpoint.retryDelaysSeconds,
    timeoutSeconds: endpoint.timeoutSeconds,
    headerNames: endpoint.headerNames,
    hasAuthorization: endpoint.authorizationSealed !== null,
    metadata: endpoint.metadata,
    secretVersion: endpoint.secretVersion,
    oldSecretExpiresAt: overlapping,
    signatureScheme: endpoint.signatureScheme,
    publicKey: endpoint.publicKey,
    publicKeys,
    health: state.health,
    queuedCount: state.queuedCount,
    urlRevision: endpoint.urlRevision,
    version: endpoint.version,
    etag,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}
