import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import {
  ENDPOINTS_PAGE_SIZE,
  type CreateEndpointInput,
  type Endpoint,
  type EndpointChanges,
  type EndpointPage,
  type EndpointPreview,
  type EndpointSecretReveal,
  type SignatureScheme,
} from './endpoint.types';

const ENDPOINT_FIELDS = `id tenantId url name description events filter transform transformVersion status disabledReason
  ratePerSecond maxConcurrency ordering orderingOnFailure retryDelaysSeconds timeoutSeconds headers hasAuthorization metadata secretVersion
  oldSecretExpiresAt signatureScheme publicKey health { circuit consecutiveFailures lastSuccessAt lastFailureAt nextProbeAt } queuedCount
  urlRevision version etag createdAt updatedAt`;

const PREVIEW_FIELDS = `matches reason eventType eventTypeMatched filterMatched transformApplied
  transformError { field message } contentType body bodyBytes deliveryUnits`;

/** Endpoints of one tenant, or of every tenant when `tenantId` is null. */
export async function listEndpoints(args: {
  tenantId: string | null;
  after: string | null;
  first?: number;
}): Promise<EndpointPage> {
  const data = await consoleRequest<{ endpoints: EndpointPage }>(
    `query Endpoints($first: Int, $after: String, $tenantId: ID) {
      endpoints(first: $first, after: $after, tenantId: $tenantId) { nodes { ${ENDPOINT_FIELDS} } nextCursor }
    }`,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: args.first ?? ENDPOINTS_PAGE_SIZE,
      ...(args.tenantId ? { tenantId: args.tenantId } : {}),
      ...(args.after ? { after: args.after } : {}),
    },
  );
  return data.endpoints;
}

export async function getEndpoint(id: string): Promise<Endpoint> {
  const data = await consoleRequest<{ endpoint: Endpoint }>(
    `query Endpoint($id: ID!) { endpoint(id: $id) { ${ENDPOINT_FIELDS} } }`,
    { id },
  );
  return data.endpoint;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot make a second endpoint. */
export async function createEndpoint(
  input: CreateEndpointInput,
  idempotencyKey: string | null,
): Promise<EndpointSecretReveal> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ createEndpoint: EndpointSecretReveal }>(
    `mutation CreateEndpoint($input: CreateEndpointInput!${idem.declaration}) {
      createEndpoint(input: $input${idem.argument}) { endpoint { ${ENDPOINT_FIELDS} } signingSecret }
    }`,
    { input, ...idem.variables },
  );
  return data.createEndpoint;
}

/** Members left undefined are not sent, so the API keeps their values; null clears. */
export async function updateEndpoint(
  id: string,
  etag: string,
  input: Partial<EndpointChanges> & { status?: string },
): Promise<Endpoint> {
  const data = await consoleRequest<{ updateEndpoint: Endpoint }>(
    `mutation UpdateEndpoint($id: ID!, $etag: String!, $input: UpdateEndpointInput!) {
      updateEndpoint(id: $id, etag: $etag, input: $input) { ${ENDPOINT_FIELDS} }
    }`,
    { id, etag, input },
  );
  return data.updateEndpoint;
}

export async function deleteEndpoint(id: string, etag: string): Promise<void> {
  await consoleRequest<{ deleteEndpoint: boolean }>(
    `mutation DeleteEndpoint($id: ID!, $etag: String!) { deleteEndpoint(id: $id, etag: $etag) }`,
    { id, etag },
  );
}

/** `signatureScheme`: the new key's scheme (switching keeps the old key signing through the overlap). */
export async function rotateEndpointSecret(
  id: string,
  etag: string,
  overlapSeconds: number,
  signatureScheme: SignatureScheme,
  idempotencyKey: string | null,
): Promise<EndpointSecretReveal> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ rotateEndpointSecret: EndpointSecretReveal }>(
    `mutation RotateEndpointSecret($id: ID!, $etag: String!, $overlapSeconds: Int,
                                   $signatureScheme: SignatureScheme${idem.declaration}) {
      rotateEndpointSecret(id: $id, etag: $etag, overlapSeconds: $overlapSeconds, signatureScheme: $signatureScheme${idem.argument}) {
        endpoint { ${ENDPOINT_FIELDS} } signingSecret
      }
    }`,
    { id, etag, overlapSeconds, signatureScheme, ...idem.variables },
  );
  return data.rotateEndpointSecret;
}

export async function resumeEndpoint(id: string, etag: string, idempotencyKey: string | null): Promise<Endpoint> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ resumeEndpoint: Endpoint }>(
    `mutation ResumeEndpoint($id: ID!, $etag: String!${idem.declaration}) {
      resumeEndpoint(id: $id, etag: $etag${idem.argument}) { ${ENDPOINT_FIELDS} }
    }`,
    { id, etag, ...idem.variables },
  );
  return data.resumeEndpoint;
}

/** What the endpoint would deliver for `payload` (JSON text, sent exactly as typed); nothing is sent. */
export async function previewEndpoint(
  endpointId: string,
  payload: string,
  eventType: string | null,
): Promise<EndpointPreview> {
  const data = await consoleRequest<{ endpointPreview: EndpointPreview }>(
    `query EndpointPreview($endpointId: ID!, $payload: String!, $eventType: String) {
      endpointPreview(endpointId: $endpointId, payload: $payload, eventType: $eventType) { ${PREVIEW_FIELDS} }
    }`,
    { endpointId, payload, ...(eventType ? { eventType } : {}) },
  );
  return data.endpointPreview;
}
