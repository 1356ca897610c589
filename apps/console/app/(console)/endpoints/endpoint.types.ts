import type {
  CreateEndpointMutation,
  EndpointFieldsFragment,
  EndpointPreviewFieldsFragment,
  EndpointsQuery,
  EndpointOrdering as GeneratedEndpointOrdering,
  OrderingOnFailure as GeneratedOrderingOnFailure,
  SignatureScheme as GeneratedSignatureScheme,
  DeliveryMode as GeneratedDeliveryMode,
} from '@/gql/graphql';

export type EndpointHealth = EndpointFieldsFragment['health'];

/** An endpoint as the API shows it: never the signing secret, header values or the authorization value. */
export type Endpoint = EndpointFieldsFragment;

export type EndpointPage = EndpointsQuery['endpoints'];

export type SignatureScheme = GeneratedSignatureScheme;
/** push: POSTed to the URL; stream: no URL, the receiver connects (docs/streams.md). Chosen on create only. */
export type DeliveryMode = GeneratedDeliveryMode;
/** ordered: one delivery at a time, in admission order, each with Svc-Sequence. */
export type EndpointOrdering = GeneratedEndpointOrdering;
/** What a delivery that ends without success does to an ordered endpoint. */
export type OrderingOnFailure = GeneratedOrderingOnFailure;

/**
 * What create and rotate answer: the new signing secret, to be shown once and then forgotten; null for ed25519,
 * whose secret key is never shown (receivers use the endpoint's public key).
 */
export type EndpointSecretReveal = CreateEndpointMutation['createEndpoint'];

/** Fields create and update share. Filter and transform are JSON text sent exactly as typed. */
export interface EndpointFields {
  /** Absent for a stream endpoint, which has none. */
  url?: string;
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
  deliveryMode: DeliveryMode;
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

export type EndpointPreview = EndpointPreviewFieldsFragment;

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
