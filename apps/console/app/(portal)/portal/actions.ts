'use server';

import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isNullableString, isObject, isStringArray, isStringRecord } from '@/lib/action-args.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';
import { graphql } from '@/gql';
import { portalAction, portalRequest } from '@/lib/portal.server';

const CreateMutation = graphql(`
  mutation PortalCreateEndpoint($input: PortalEndpointInput!, $idempotencyKey: String) {
    portalCreateEndpoint(input: $input, idempotencyKey: $idempotencyKey) {
      endpoint {
        id
      }
      signingSecret
    }
  }
`);

const UpdateMutation = graphql(`
  mutation PortalUpdateEndpoint($id: ID!, $etag: String!, $input: PortalEndpointUpdateInput!) {
    portalUpdateEndpoint(id: $id, etag: $etag, input: $input) {
      id
    }
  }
`);

const ResumeMutation = graphql(`
  mutation PortalResumeEndpoint($id: ID!, $etag: String!) {
    portalResumeEndpoint(id: $id, etag: $etag) {
      id
    }
  }
`);

const RotateMutation = graphql(`
  mutation PortalRotateEndpointSecret($id: ID!, $etag: String!, $idempotencyKey: String) {
    portalRotateEndpointSecret(id: $id, etag: $etag, idempotencyKey: $idempotencyKey) {
      signingSecret
    }
  }
`);

const RevealMutation = graphql(`
  mutation PortalRevealEndpointSecret($id: ID!) {
    portalRevealEndpointSecret(id: $id) {
      secret
      publicKey
    }
  }
`);

const CreateStreamTokenMutation = graphql(`
  mutation PortalCreateStreamToken($endpointId: ID!, $name: String, $idempotencyKey: String) {
    portalCreateStreamToken(endpointId: $endpointId, name: $name, idempotencyKey: $idempotencyKey) {
      token
    }
  }
`);

const RevokeStreamTokenMutation = graphql(`
  mutation PortalRevokeStreamToken($endpointId: ID!, $id: ID!) {
    portalRevokeStreamToken(endpointId: $endpointId, id: $id)
  }
`);

const TestMutation = graphql(`
  mutation PortalSendTestEvent($endpointId: ID!) {
    portalSendTestEvent(endpointId: $endpointId) {
      id
    }
  }
`);

const RetryMutation = graphql(`
  mutation PortalRetryDelivery($id: ID!) {
    portalRetryDelivery(id: $id) {
      id
    }
  }
`);

const ReplayMutation = graphql(`
  mutation PortalReplayDelivery($id: ID!, $idempotencyKey: String) {
    portalReplayDelivery(id: $id, idempotencyKey: $idempotencyKey) {
      id
    }
  }
`);

/** What the portal's endpoint form sends; copied field by field so nothing else reaches the API. */
export interface PortalEndpointFields {
  /** Absent for a stream endpoint, which has none. */
  url?: string;
  name: string;
  events: string[];
  filter: string | null;
  /** Absent: the endpoint keeps its headers. */
  headers?: Record<string, string>;
}

function checkFields(input: unknown): PortalEndpointFields | null {
  if (!isObject(input)) return null;
  const { url, name, events, filter, headers } = input;
  if ((url !== undefined && typeof url !== 'string') || typeof name !== 'string' || !isStringArray(events)) return null;
  if (!isNullableString(filter) || (headers !== undefined && !isStringRecord(headers))) return null;
  return {
    ...(url === undefined ? {} : { url }),
    name,
    events,
    filter,
    ...(headers === undefined ? {} : { headers }),
  };
}

const isId = (value: unknown): value is string => typeof value === 'string' && /^[a-z]+_[0-9a-z]{26}$/.test(value);

export async function createPortalEndpoint(
  input: unknown,
  signatureScheme: unknown,
  idempotencyKey: unknown,
  deliveryMode: unknown = 'push',
): Promise<ActionResult<{ id: string; signingSecret: string | null }>> {
  const fields = checkFields(input);
  if (!fields) return invalidArgument('body', 'the endpoint is not well formed');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  if (deliveryMode !== 'push' && deliveryMode !== 'stream')
    return invalidArgument('delivery_mode', 'delivery_mode must be push or stream');
  const scheme = signatureScheme === 'ed25519' ? 'ed25519' : 'hmac';
  return portalAction(async () => {
    const data = await portalRequest(CreateMutation, {
      input: { ...fields, signatureScheme: scheme, deliveryMode },
      idempotencyKey,
    });
    return { id: data.portalCreateEndpoint.endpoint.id, signingSecret: data.portalCreateEndpoint.signingSecret };
  });
}

export async function updatePortalEndpoint(id: unknown, etag: unknown, input: unknown): Promise<ActionResult<true>> {
  const fields = checkFields(input);
  if (!isId(id) || typeof etag !== 'string' || !fields) return invalidArgument('body', 'the change is not well formed');
  return portalAction(async () => {
    await portalRequest(UpdateMutation, { id, etag, input: fields });
    return true as const;
  });
}

export async function setPortalEndpointStatus(
  id: unknown,
  etag: unknown,
  status: unknown,
): Promise<ActionResult<true>> {
  if (!isId(id) || typeof etag !== 'string' || (status !== 'enabled' && status !== 'paused'))
    return invalidArgument('status', 'status must be enabled or paused');
  return portalAction(async () => {
    await portalRequest(UpdateMutation, { id, etag, input: { status } });
    return true as const;
  });
}

export async function resumePortalEndpoint(id: unknown, etag: unknown): Promise<ActionResult<true>> {
  if (!isId(id) || typeof etag !== 'string') return invalidArgument('id', 'not an endpoint');
  return portalAction(async () => {
    await portalRequest(ResumeMutation, {
      id,
      etag,
    });
    return true as const;
  });
}

export async function rotatePortalSecret(
  id: unknown,
  etag: unknown,
  idempotencyKey: unknown,
): Promise<ActionResult<string | null>> {
  if (!isId(id) || typeof etag !== 'string') return invalidArgument('id', 'not an endpoint');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return portalAction(async () => {
    const data = await portalRequest(RotateMutation, { id, etag, idempotencyKey });
    return data.portalRotateEndpointSecret.signingSecret;
  });
}

export async function revealPortalSecret(
  id: unknown,
): Promise<ActionResult<{ secret: string | null; publicKey: string | null }>> {
  if (!isId(id)) return invalidArgument('id', 'not an endpoint');
  return portalAction(async () => {
    const data = await portalRequest(RevealMutation, { id });
    return data.portalRevealEndpointSecret;
  });
}

export async function sendPortalTest(endpointId: unknown): Promise<ActionResult<string>> {
  if (!isId(endpointId)) return invalidArgument('id', 'not an endpoint');
  return portalAction(async () => {
    const data = await portalRequest(TestMutation, { endpointId });
    return data.portalSendTestEvent.id;
  });
}

export async function retryPortalDelivery(id: unknown): Promise<ActionResult<true>> {
  if (!isId(id)) return invalidArgument('id', 'not a delivery');
  return portalAction(async () => {
    await portalRequest(RetryMutation, { id });
    return true as const;
  });
}

export async function replayPortalDelivery(id: unknown, idempotencyKey: unknown): Promise<ActionResult<string>> {
  if (!isId(id)) return invalidArgument('id', 'not a delivery');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return portalAction(async () => {
    const data = await portalRequest(ReplayMutation, { id, idempotencyKey });
    return data.portalReplayDelivery.id;
  });
}

export async function createPortalStreamToken(
  endpointId: string,
  name: string,
  idempotencyKey: string,
): Promise<ActionResult<{ token: string | null }>> {
  if (!isId(endpointId)) return invalidArgument('id', 'not an endpoint');
  if (typeof name !== 'string') return invalidArgument('name', 'name must be a string');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  return portalAction(async () => {
    const data = await portalRequest(CreateStreamTokenMutation, {
      endpointId,
      ...(name.trim() ? { name: name.trim() } : {}),
      idempotencyKey,
    });
    return { token: data.portalCreateStreamToken.token ?? null };
  });
}

export async function revokePortalStreamToken(endpointId: string, tokenId: string): Promise<ActionResult<true>> {
  if (!isId(endpointId) || !isId(tokenId)) return invalidArgument('id', 'not a stream token');
  return portalAction(async () => {
    await portalRequest(RevokeStreamTokenMutation, { endpointId, id: tokenId });
    return true as const;
  });
}
