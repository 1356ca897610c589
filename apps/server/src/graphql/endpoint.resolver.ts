import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import {
  CreateEndpointInput as CreateEndpointSchema,
  EmptyInput,
  ListEndpointsQuery,
  parseInput,
  PreviewInput,
  previewEndpoint,
  RotateSecretInput,
  UpdateEndpointInput as UpdateEndpointSchema,
  type CallContext,
  type EndpointView,
  type PreviewResult,
} from '@svc/core';
import { EndpointStatus, SignatureScheme } from './enums.js';
import { callContext, loadersOf, type GraphqlContext } from './context.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined, rawJsonArgument } from './mappers.js';
import { toReplay } from './replay.resolver.js';
import { ReplayConnection } from './replay.types.js';
import {
  CreateEndpointInput,
  Endpoint,
  EndpointConnection,
  EndpointPreview,
  EndpointSecretReveal,
  UpdateEndpointInput,
} from './endpoint.types.js';
import type { PortalEndpointInput, PortalEndpointUpdateInput } from './portal.types.js';

/** The API's endpoint as GraphQL shows it (the console's and the portal's). */
export function toEndpoint(view: EndpointView): Endpoint {
  const { headerNames, ...rest } = view;
  return { ...rest, headers: headerNames };
}

/** Idempotency keeps the reveal without its secret. */
export function withoutSecret(reveal: EndpointSecretReveal): { endpoint: Endpoint } {
  return { endpoint: reveal.endpoint };
}

/**
 * Another look at a reveal (an idempotent replay): the secret is shown again only to the key that made it and
 * only while it is still the endpoint's current secret, like the REST replay.
 */
export async function revealAgain(
  context: GraphqlContext,
  stored: unknown,
  replay: { ctx: CallContext; sameKey: boolean },
): Promise<EndpointSecretReveal> {
  const { endpoint } = stored as { endpoint: Endpoint };
  const signingSecret = replay.sameKey
    ? await context.services.endpoints.currentSecretMadeBy(replay.ctx, endpoint.id, endpoint.secretVersion)
    : null;
  return { endpoint, signingSecret };
}

function toPreview(result: PreviewResult): EndpointPreview {
  return { ...result };
}

/** The fields a portal session may set too, from GraphQL arguments to the REST input shape (JSON text kept exact). */
export function receiverEndpointFields(
  input: Pick<
    CreateEndpointInput | UpdateEndpointInput | PortalEndpointInput | PortalEndpointUpdateInput,
    'url' | 'name' | 'description' | 'events' | 'filter' | 'headers' | 'authorization'
  >,
): Record<string, unknown> {
  return defined({
    url: input.url ?? undefined,
    name: input.name ?? undefined,
    description: input.description ?? undefined,
    events: input.events ?? undefined,
    filter: rawJsonArgument(input.filter, 'filter'),
    headers: input.headers ?? undefined,
    authorization: input.authorization,
  });
}

/** GraphQL arguments to the REST input shape the service validates (snake_case names, JSON text kept exact). */
function endpointFields(input: CreateEndpointInput | UpdateEndpointInput): Record<string, unknown> {
  return defined({
    ...receiverEndpointFields(input),
    transform: rawJsonArgument(input.transform, 'transform'),
    status: input.status ?? undefined,
    rate_per_second: input.ratePerSecond ?? undefined,
    max_concurrency: input.maxConcurrency ?? undefined,
    retry_delays_seconds: input.retryDelaysSeconds ?? undefined,
    timeout_seconds: input.timeoutSeconds ?? undefined,
    metadata: input.metadata ?? undefined,
    ordering: input.ordering ?? undefined,
    ordering_on_failure: input.orderingOnFailure ?? undefined,
  });
}

@Resolver(() => Endpoint)
export class EndpointResolver {
  @Authorized()
  @Query(() => EndpointConnection)
  async endpoints(
    @Ctx() context: GraphqlContext,
    @Arg('tenantId', () => ID, { nullable: true }) tenantId?: string,
    @Arg('status', () => EndpointStatus, { nullable: true }) status?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<EndpointConnection> {
    const page = await context.services.endpoints.listEndpoints(
      callContext(context),
      parseInput(
        ListEndpointsQuery,
        defined({
          tenant_id: tenantId ?? undefined,
          status: status ?? undefined,
          limit: first ?? undefined,
          cursor: after ?? undefined,
        }),
      ),
    );
    return { nodes: page.data.map(toEndpoint), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => Endpoint)
  async endpoint(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Endpoint> {
    return toEndpoint(await context.services.endpoints.getEndpoint(callContext(context), id));
  }

  @Authorized()
  @Query(() => EndpointPreview, {
    description: 'Runs the endpoint’s event patterns, filter and transform on a payload (JSON text)',
  })
  async endpointPreview(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('payload', () => String) payload: string,
    @Arg('eventType', () => String, { nullable: true }) eventType?: string,
  ): Promise<EndpointPreview> {
    const result = await previewEndpoint(
      context.services.endpoints,
      callContext(context),
      parseInput(
        PreviewInput,
        defined({
          endpoint_id: endpointId,
          payload: rawJsonArgument(payload, 'payload'),
          event_type: eventType ?? undefined,
        }),
      ),
    );
    return toPreview(result);
  }

  // The operator's bulk replays: a portal session is refused (docs/portal.md).
  @Authorized()
  @FieldResolver(() => ReplayConnection, { description: "The endpoint's bulk replays, oldest first" })
  async replays(
    @Ctx() context: GraphqlContext,
    @Root() endpoint: Endpoint,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<ReplayConnection> {
    const page = await loadersOf(context).endpointReplays.load({
      endpointId: endpoint.id,
      limit: first ?? undefined,
      cursor: after ?? undefined,
    });
    return { nodes: page.data.map(toReplay), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Mutation(() => EndpointSecretReveal)
  async createEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => CreateEndpointInput) input: CreateEndpointInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<EndpointSecretReveal> {
    const parsed = parseInput(CreateEndpointSchema, {
      tenant_id: input.tenantId,
      ...endpointFields(input),
      ...defined({
        signature_scheme: input.signatureScheme ?? undefined,
        delivery_mode: input.deliveryMode ?? undefined,
      }),
    });
    return runIdempotent(context, idempotencyKey, {
      operation: 'createEndpoint',
      input: parsed,
      async run(ctx) {
        const created = await context.services.endpoints.createEndpoint(ctx, parsed);
        return { endpoint: toEndpoint(created.endpoint), signingSecret: created.signingSecret };
      },
      stored: withoutSecret,
      replay: (stored, replay) => revealAgain(context, stored, replay),
    });
  }

  @Authorized()
  @Mutation(() => Endpoint)
  async updateEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('input', () => UpdateEndpointInput) input: UpdateEndpointInput,
  ): Promise<Endpoint> {
    return toEndpoint(
      await context.services.endpoints.updateEndpoint(
        callContext(context),
        id,
        etag,
        parseInput(UpdateEndpointSchema, endpointFields(input)),
      ),
    );
  }

  @Authorized()
  @Mutation(() => Boolean)
  async deleteEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<boolean> {
    await context.services.endpoints.deleteEndpoint(callContext(context), id, etag);
    return true;
  }

  @Authorized()
  @Mutation(() => EndpointSecretReveal)
  async rotateEndpointSecret(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('overlapSeconds', () => Int, { nullable: true }) overlapSeconds?: number,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
    @Arg('signatureScheme', () => SignatureScheme, {
      nullable: true,
      description: "The new secret's scheme; the endpoint's current one by default",
    })
    signatureScheme?: keyof typeof SignatureScheme | null,
  ): Promise<EndpointSecretReveal> {
    const parsed = parseInput(
      RotateSecretInput,
      defined({ overlap_seconds: overlapSeconds ?? undefined, signature_scheme: signatureScheme ?? undefined }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'rotateEndpointSecret',
      params: { id },
      input: parsed,
      async run(ctx) {
        const rotated = await context.services.endpoints.rotateSecret(ctx, id, etag, parsed);
        return { endpoint: toEndpoint(rotated.endpoint), signingSecret: rotated.signingSecret };
      },
      stored: withoutSecret,
      replay: (stored, replay) => revealAgain(context, stored, replay),
    });
  }

  @Authorized()
  @Mutation(() => Endpoint)
  async resumeEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Endpoint> {
    const parsed = parseInput(EmptyInput, {});
    return runIdempotent(context, idempotencyKey, {
      operation: 'resumeEndpoint',
      params: { id },
      input: parsed,
      run: async (ctx) => toEndpoint(await context.services.endpoints.resumeEndpoint(ctx, id, etag, parsed)),
    });
  }
}
