import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Resolver, Root } from 'type-graphql';
import {
  CreateStreamTokenInput,
  parseInput,
  type CallContext,
  type StreamConnectionView,
  type StreamTokenView,
} from '@svc/core';
import { callContext, type GraphqlContext } from './context.js';
import { Endpoint } from './endpoint.types.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined } from './mappers.js';
import { StreamConnection, StreamToken, StreamTokenConnection, StreamTokenReveal } from './stream.types.js';

export function toStreamToken({ id, name, createdAt, lastUsedAt }: StreamTokenView): StreamToken {
  return { id, name, createdAt, lastUsedAt };
}

export function toStreamConnection(view: StreamConnectionView): StreamConnection {
  const { id, tokenId, openedAt, remoteAddress, unacknowledged } = view;
  return { id, tokenId, openedAt, remoteAddress, unacknowledged };
}

/** Where a stream endpoint's receiver connects (its acknowledgements go to `<it>/acks`), on the public base URL. */
export function streamUrlOf(publicBaseUrl: string | null, endpointId: string): string {
  if (publicBaseUrl === null) throw new Error('the GraphQL schema was built without a public base URL');
  return `${publicBaseUrl.replace(/\/+$/, '')}/v1/endpoints/${encodeURIComponent(endpointId)}/stream`;
}

/** Idempotency keeps the reveal without its token, which is stored only as a hash: a replay shows null. */
function tokenWithheld(reveal: StreamTokenReveal): StreamTokenReveal {
  return { streamToken: reveal.streamToken, token: null };
}

/** The name argument of a new token, in the REST input shape the service validates. */
function streamTokenInput(name: string | null | undefined) {
  return parseInput(CreateStreamTokenInput, defined({ name: name ?? undefined }));
}

/**
 * A new stream token, once per idempotency key (the console's and the portal's mutation): `create` is the service
 * call of the surface. A replay shows the token record without its secret.
 */
export function createStreamTokenOnce(
  context: GraphqlContext,
  idempotencyKey: string | null | undefined,
  request: { operation: string; endpointId: string; name: string | null | undefined },
  create: (
    ctx: CallContext,
    endpointId: string,
    input: CreateStreamTokenInput,
  ) => Promise<{ token: StreamTokenView; secret: string }>,
): Promise<StreamTokenReveal> {
  const parsed = streamTokenInput(request.name);
  return runIdempotent(context, idempotencyKey, {
    operation: request.operation,
    params: { endpointId: request.endpointId },
    input: parsed,
    async run(ctx) {
      const created = await create(ctx, request.endpointId, parsed);
      return { streamToken: toStreamToken(created.token), token: created.secret };
    },
    stored: tokenWithheld,
    replay: async (stored) => stored as StreamTokenReveal,
  });
}

/**
 * A stream endpoint's tokens and open connections (docs/streams.md), through the services the REST routes call. A
 * push endpoint has neither: its fields read empty, and creating a token for it is refused (invalid_state).
 */
@Resolver(() => Endpoint)
export class StreamResolver {
  constructor(private readonly publicBaseUrl: string | null) {}

  @Authorized()
  @FieldResolver(() => String, {
    nullable: true,
    description:
      "A stream endpoint's stream (GET, with a stream token; its acknowledgements go to <streamUrl>/acks); null " +
      'for a push endpoint',
  })
  streamUrl(@Root() endpoint: Endpoint): string | null {
    return endpoint.deliveryMode === 'stream' ? streamUrlOf(this.publicBaseUrl, endpoint.id) : null;
  }

  @Authorized()
  @FieldResolver(() => StreamTokenConnection, {
    description: "A stream endpoint's tokens (never the tokens themselves)",
  })
  async streamTokens(
    @Ctx() context: GraphqlContext,
    @Root() endpoint: Endpoint,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<StreamTokenConnection> {
    if (endpoint.deliveryMode !== 'stream') return { nodes: [], nextCursor: null };
    const page = await context.services.streamTokens.list(
      callContext(context),
      endpoint.id,
      defined({ limit: first ?? undefined, cursor: after ?? undefined }),
    );
    return { nodes: page.data.map(toStreamToken), nextCursor: page.nextCursor };
  }

  @Authorized()
  @FieldResolver(() => [StreamConnection], {
    description: "A stream endpoint's open connections, oldest first (any server process)",
  })
  async streamConnections(@Ctx() context: GraphqlContext, @Root() endpoint: Endpoint): Promise<StreamConnection[]> {
    if (endpoint.deliveryMode !== 'stream') return [];
    const connections = await context.services.streamConnections.list(callContext(context), endpoint.id);
    return connections.map(toStreamConnection);
  }

  @Authorized()
  @Mutation(() => StreamTokenReveal, { description: 'A new token of a stream endpoint, shown this once' })
  async createStreamToken(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('name', () => String, { nullable: true, description: 'Up to 100 characters' }) name?: string | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<StreamTokenReveal> {
    return createStreamTokenOnce(
      context,
      idempotencyKey,
      { operation: 'createStreamToken', endpointId, name },
      (ctx, id, input) => context.services.streamTokens.create(ctx, id, input),
    );
  }

  @Authorized()
  @Mutation(() => Boolean, { description: 'Revokes a stream token: every stream open with it ends at once' })
  async revokeStreamToken(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('id', () => ID) id: string,
  ): Promise<boolean> {
    await context.services.streamTokens.revoke(callContext(context), endpointId, id);
    return true;
  }
}
