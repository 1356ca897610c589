import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import type { EndpointStream, StreamTokenReveal } from './stream.types';

const EndpointStreamQuery = graphql(`
  query EndpointStream($id: ID!) {
    endpoint(id: $id) {
      id
      streamUrl
      streamConnections {
        id
        tokenId
        openedAt
        remoteAddress
        unacknowledged
      }
      streamTokens(first: 100) {
        nodes {
          id
          name
          createdAt
          lastUsedAt
        }
        nextCursor
      }
    }
  }
`);

const CreateStreamTokenMutation = graphql(`
  mutation CreateStreamToken($endpointId: ID!, $name: String, $idempotencyKey: String) {
    createStreamToken(endpointId: $endpointId, name: $name, idempotencyKey: $idempotencyKey) {
      streamToken {
        id
        name
        createdAt
        lastUsedAt
      }
      token
    }
  }
`);

const RevokeStreamTokenMutation = graphql(`
  mutation RevokeStreamToken($endpointId: ID!, $id: ID!) {
    revokeStreamToken(endpointId: $endpointId, id: $id)
  }
`);

/** A stream endpoint's stream URL, open connections and tokens (the first 100: an endpoint holds at most 50). */
export async function getEndpointStream(id: string): Promise<EndpointStream> {
  const data = await consoleRequest(EndpointStreamQuery, { id });
  return data.endpoint;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot make a second token. */
export async function createStreamToken(
  endpointId: string,
  name: string | null,
  idempotencyKey: string | null,
): Promise<StreamTokenReveal> {
  const data = await consoleRequest(CreateStreamTokenMutation, {
    endpointId,
    ...(name ? { name } : {}),
    ...idempotencyVariable(idempotencyKey),
  });
  return data.createStreamToken;
}

export async function revokeStreamToken(endpointId: string, id: string): Promise<void> {
  await consoleRequest(RevokeStreamTokenMutation, { endpointId, id });
}
