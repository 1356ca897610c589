import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { PORTAL } from './authorization.js';
import { callContext, type GraphqlContext } from './context.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS } from './idempotent.js';
import { defined } from './mappers.js';
import { PortalEndpointStream } from './portal.types.js';
import { createStreamTokenOnce, streamUrlOf, toStreamConnection, toStreamToken } from './stream.resolver.js';
import { StreamTokenReveal } from './stream.types.js';

/**
 * The portal's stream endpoints (docs/streams.md, docs/portal.md): the tenant's own only, through PortalService,
 * which narrows every call to the session's tenant, refuses changes to a read-only session and records them.
 */
@Resolver()
export class PortalStreamResolver {
  constructor(private readonly publicBaseUrl: string | null) {}

  @Authorized(PORTAL)
  @Query(() => PortalEndpointStream, {
    description: "A stream endpoint's stream URL, open connections and tokens (a push endpoint: invalid_state)",
  })
  async portalEndpointStream(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('first', () => Int, { nullable: true, description: 'Tokens per page' }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<PortalEndpointStream> {
    const ctx = callContext(context);
    const tokens = await context.services.portal.listStreamTokens(
      ctx,
      endpointId,
      defined({ limit: first ?? undefined, cursor: after ?? undefined }),
    );
    const connections = await context.services.portal.listStreamConnections(ctx, endpointId);
    return {
      streamUrl: streamUrlOf(this.publicBaseUrl, endpointId),
      connections: connections.map(toStreamConnection),
      tokens: { nodes: tokens.data.map(toStreamToken), nextCursor: tokens.nextCursor },
    };
  }

  @Authorized(PORTAL)
  @Mutation(() => StreamTokenReveal, { description: 'A new token of a stream endpoint, shown this once' })
  async portalCreateStreamToken(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('name', () => String, { nullable: true, description: 'Up to 100 characters' }) name?: string | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<StreamTokenReveal> {
    return createStreamTokenOnce(
      context,
      idempotencyKey,
      { operation: 'portalCreateStreamToken', endpointId, name },
      (ctx, id, input) => context.services.portal.createStreamToken(ctx, id, input),
    );
  }

  @Authorized(PORTAL)
  @Mutation(() => Boolean, { description: 'Revokes a stream token: every stream open with it ends at once' })
  async portalRevokeStreamToken(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('id', () => ID) id: string,
  ): Promise<boolean> {
    await context.services.portal.revokeStreamToken(callContext(context), endpointId, id);
    return true;
  }
}
