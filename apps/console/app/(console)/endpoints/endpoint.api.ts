import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
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

graphql(`
  fragment EndpointFields on Endpoint {
    id
    tenantId
    deliveryMode
    url
    name
    description
    events
    filter
    transform
    transformVersion
    status
    disabledReason
    ratePerSecond
    maxConcurrency
    ordering
    orderingOnFailure
    retryDelaysSeconds
    timeoutSeconds
    headers
    hasAuthorization
    metadata
    secretVersion
    oldSecretExpiresAt
    signatureScheme
    publicKey
    publicKeys {
      publicKey
      expiresAt
    }
    health {
      circuit
      consecutiveFailures
      lastSuccessAt
      lastFailureAt
      nextProbeAt
    }
    queuedCount
    urlRevision
    version
    etag
    createdAt
    updatedAt
  }
`);

graphql(`
  fragment EndpointPreviewFields on EndpointPreview {
    matches
    reason
    eventType
    eventTypeMatched
    filterMatched
    transformApplied
    transformError {
      field
      message
    }
    contentType
    body
    bodyBytes
    deliveryUnits
  }
`);

const EndpointsQuery = graphql(`
  query Endpoints($first: Int, $after: String, $tenantId: ID) {
    endpoints(first: $first, after: $after, tenantId: $tenantId) {
      nodes {
        ...EndpointFields
      }
      nextCursor
    }
  }
`);

const EndpointQuery = graphql(`
  query Endpoint($id: ID!) {
    endpoint(id: $id) {
      ...EndpointFields
    }
  }
`);

const CreateEndpointMutation = graphql(`
  mutation CreateEndpoint($input: CreateEndpointInput!, $idempotencyKey: String) {
    createEndpoint(input: $input, idempotencyKey: $idempotencyKey) {
      endpoint {
        ...EndpointFields
      }
      signingSecret
    }
  }
`);

const UpdateEndpointMutation = graphql(`
  mutation UpdateEndpoint($id: ID!, $etag: String!, $input: UpdateEndpointInput!) {
    updateEndpoint(id: $id, etag: $etag, input: $input) {
      ...EndpointFields
    }
  }
`);

const DeleteEndpointMutation = graphql(`
  mutation DeleteEndpoint($id: ID!, $etag: String!) {
    deleteEndpoint(id: $id, etag: $etag)
  }
`);

const RotateEndpointSecretMutation = graphql(`
  mutation RotateEndpointSecret(
    $id: ID!
    $etag: String!
    $overlapSeconds: Int
    $signatureScheme: SignatureScheme
    $idempotencyKey: String
  ) {
    rotateEndpointSecret(
      id: $id
      etag: $etag
      overlapSeconds: $overlapSeconds
      signatureScheme: $signatureScheme
      idempotencyKey: $idempotencyKey
    ) {
      endpoint {
        ...EndpointFields
      }
      signingSecret
    }
  }
`);

const ResumeEndpointMutation = graphql(`
  mutation ResumeEndpoint($id: ID!, $etag: String!, $idempotencyKey: String) {
    resumeEndpoint(id: $id, etag: $etag, idempotencyKey: $idempotencyKey) {
      ...EndpointFields
    }
  }
`);

const EndpointPreviewQuery = graphql(`
  query EndpointPreview($endpointId: ID!, $payload: String!, $eventType: String) {
    endpointPreview(endpointId: $endpointId, payload: $payload, eventType: $eventType) {
      ...EndpointPreviewFields
    }
  }
`);

/** Endpoints of one tenant, or of every tenant when `tenantId` is null. */
export async function listEndpoints(args: {
  tenantId: string | null;
  after: string | null;
  first?: number;
}): Promise<EndpointPage> {
  const data = await consoleRequest(
    EndpointsQuery,
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
  const data = await consoleRequest(EndpointQuery, { id });
  return data.endpoint;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot make a second endpoint. */
export async function createEndpoint(
  input: CreateEndpointInput,
  idempotencyKey: string | null,
): Promise<EndpointSecretReveal> {
  const data = await consoleRequest(CreateEndpointMutation, { input, ...idempotencyVariable(idempotencyKey) });
  return data.createEndpoint;
}

/** Members left undefined are not sent, so the API keeps their values; null clears. */
export async function updateEndpoint(
  id: string,
  etag: string,
  input: Partial<EndpointChanges> & { status?: string },
): Promise<Endpoint> {
  const data = await consoleRequest(UpdateEndpointMutation, { id, etag, input });
  return data.updateEndpoint;
}

export async function deleteEndpoint(id: string, etag: string): Promise<void> {
  await consoleRequest(DeleteEndpointMutation, { id, etag });
}

/** `signatureScheme`: the new key's scheme (switching keeps the old key signing through the overlap). */
export async function rotateEndpointSecret(
  id: string,
  etag: string,
  overlapSeconds: number,
  signatureScheme: SignatureScheme,
  idempotencyKey: string | null,
): Promise<EndpointSecretReveal> {
  const data = await consoleRequest(RotateEndpointSecretMutation, {
    id,
    etag,
    overlapSeconds,
    signatureScheme,
    ...idempotencyVariable(idempotencyKey),
  });
  return data.rotateEndpointSecret;
}

export async function resumeEndpoint(id: string, etag: string, idempotencyKey: string | null): Promise<Endpoint> {
  const data = await consoleRequest(ResumeEndpointMutation, { id, etag, ...idempotencyVariable(idempotencyKey) });
  return data.resumeEndpoint;
}

/** What the endpoint would deliver for `payload` (JSON text, sent exactly as typed); nothing is sent. */
export async function previewEndpoint(
  endpointId: string,
  payload: string,
  eventType: string | null,
): Promise<EndpointPreview> {
  const data = await consoleRequest(EndpointPreviewQuery, { endpointId, payload, ...(eventType ? { eventType } : {}) });
  return data.endpointPreview;
}
