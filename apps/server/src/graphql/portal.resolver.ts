import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import {
  ListDeliveriesQuery,
  ListMessagesQuery,
  parseInput,
  PortalEndpointInput as PortalEndpointSchema,
  PortalEndpointUpdate as PortalEndpointUpdateSchema,
} from '@svc/core';
import { PORTAL } from './authorization.js';
import { callContext, type GraphqlContext } from './context.js';
import { toDelivery } from './delivery.resolver.js';
import { Delivery, DeliveryConnection } from './delivery.types.js';
import { receiverEndpointFields, revealAgain, toEndpoint, withoutSecret } from './endpoint.resolver.js';
import { Endpoint, EndpointConnection, EndpointSecretReveal } from './endpoint.types.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { DeliveryStatus, MessageStatus } from './enums.js';
import { defined, toEventType } from './mappers.js';
import { toMessage, toMessageContent } from './message.resolver.js';
import { Message, MessageConnection, MessageContent } from './message.types.js';
import { PortalEndpointInput, PortalEndpointUpdateInput, PortalSigningSecret } from './portal.types.js';
import { EventTypeConnection } from './types.js';

/**
 * The receivers' portal (docs/portal.md): every field needs a portal session and reaches only its tenant, through
 * PortalService. Messages and deliveries read newest first, the order a person looks for what just happened.
 */
@Resolver()
export class PortalResolver {
  @Authorized(PORTAL)
  @Query(() => EventTypeConnection, {
    description: 'The event types of this portal, by name, with descriptions and examples: a page at a time',
  })
  async portalEventTypes(
    @Ctx() context: GraphqlContext,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<EventTypeConnection> {
    const page = await context.services.portal.listEventTypes(
      callContext(context),
      defined({ limit: first ?? undefined, cursor: after ?? undefined }),
    );
    return { nodes: page.data.map(toEventType), nextCursor: page.nextCursor };
  }

  @Authorized(PORTAL)
  @Query(() => [String], { description: 'The names of every event type of this portal (what endpoints subscribe to)' })
  async portalEventTypeNames(@Ctx() context: GraphqlContext): Promise<string[]> {
    return context.services.portal.eventTypeNames(callContext(context));
  }

  @Authorized(PORTAL)
  @Query(() => EndpointConnection, { description: "The tenant's endpoints" })
  async portalEndpoints(
    @Ctx() context: GraphqlContext,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<EndpointConnection> {
    const page = await context.services.portal.listEndpoints(
      callContext(context),
      defined({ limit: first ?? undefined, cursor: after ?? undefined }),
    );
    return { nodes: page.data.map(toEndpoint), nextCursor: page.nextCursor };
  }

  @Authorized(PORTAL)
  @Query(() => Endpoint)
  async portalEndpoint(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Endpoint> {
    return toEndpoint(await context.services.portal.getEndpoint(callContext(context), id));
  }

  @Authorized(PORTAL)
  @Query(() => MessageConnection, { description: "The tenant's messages of the last 30 days, newest first" })
  async portalMessages(
    @Ctx() context: GraphqlContext,
    @Arg('status', () => MessageStatus, { nullable: true }) status?: string,
    @Arg('eventType', () => String, { nullable: true }) eventType?: string,
    @Arg('externalId', () => String, { nullable: true, description: "The operator's own ID of the message" })
    externalId?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<MessageConnection> {
    const query = parseInput(
      ListMessagesQuery.omit({ tenant_id: true }),
      defined({
        status: status ?? undefined,
        event_type: eventType ?? undefined,
        external_id: externalId ?? undefined,
        order: 'newest',
        limit: first ?? undefined,
        cursor: after ?? undefined,
      }),
    );
    const page = await context.services.portal.listMessages(callContext(context), query);
    return { nodes: page.data.map(toMessage), nextCursor: page.nextCursor };
  }

  @Authorized(PORTAL)
  @Query(() => Message)
  async portalMessage(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Message> {
    return toMessage(await context.services.portal.getMessage(callContext(context), id));
  }

  @Authorized(PORTAL)
  @Query(() => MessageContent, { description: 'payload_expired after redaction or the end of retention' })
  async portalMessageContent(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<MessageContent> {
    return toMessageContent(await context.services.portal.getMessageContent(callContext(context), id));
  }

  @Authorized(PORTAL)
  @Query(() => DeliveryConnection, { description: "The tenant's deliveries of the last 30 days, newest first" })
  async portalDeliveries(
    @Ctx() context: GraphqlContext,
    @Arg('status', () => DeliveryStatus, { nullable: true, description: 'failed or expired: the dead letters' })
    status?: string,
    @Arg('endpointId', () => ID, { nullable: true }) endpointId?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<DeliveryConnection> {
    const query = parseInput(
      ListDeliveriesQuery.omit({ tenant_id: true }),
      defined({
        status: status ?? undefined,
        endpoint_id: endpointId ?? undefined,
        order: 'newest',
        limit: first ?? undefined,
        cursor: after ?? undefined,
      }),
    );
    const page = await context.services.portal.listDeliveries(callContext(context), query);
    return { nodes: page.data.map(toDelivery), nextCursor: page.nextCursor };
  }

  @Authorized(PORTAL)
  @Query(() => Delivery)
  async portalDelivery(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Delivery> {
    return toDelivery(await context.services.portal.getDelivery(callContext(context), id));
  }

  @Authorized(PORTAL)
  @Mutation(() => EndpointSecretReveal, { description: 'Creates an endpoint of the tenant; its secret is shown once' })
  async portalCreateEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => PortalEndpointInput) input: PortalEndpointInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<EndpointSecretReveal> {
    const parsed = parseInput(PortalEndpointSchema, {
      ...receiverEndpointFields(input),
      ...defined({
        signature_scheme: input.signatureScheme ?? undefined,
        delivery_mode: input.deliveryMode ?? undefined,
      }),
    });
    return runIdempotent(context, idempotencyKey, {
      operation: 'portalCreateEndpoint',
      input: parsed,
      async run(ctx) {
        const created = await context.services.portal.createEndpoint(ctx, parsed);
        return { endpoint: toEndpoint(created.endpoint), signingSecret: created.signingSecret };
      },
      stored: withoutSecret,
      replay: (stored, replay) => revealAgain(context, stored, replay),
    });
  }

  @Authorized(PORTAL)
  @Mutation(() => Endpoint, { description: 'Changes URL, events, filter, headers, or pauses and enables' })
  async portalUpdateEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('input', () => PortalEndpointUpdateInput) input: PortalEndpointUpdateInput,
  ): Promise<Endpoint> {
    const parsed = parseInput(PortalEndpointUpdateSchema, {
      ...receiverEndpointFields(input),
      ...defined({ status: input.status ?? undefined }),
    });
    return toEndpoint(await context.services.portal.updateEndpoint(callContext(context), id, etag, parsed));
  }

  @Authorized(PORTAL)
  @Mutation(() => Boolean)
  async portalDeleteEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<boolean> {
    await context.services.portal.deleteEndpoint(callContext(context), id, etag);
    return true;
  }

  @Authorized(PORTAL)
  @Mutation(() => Endpoint, { description: 'Re-enables a disabled endpoint or one behind an open circuit' })
  async portalResumeEndpoint(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<Endpoint> {
    return toEndpoint(await context.services.portal.resumeEndpoint(callContext(context), id, etag));
  }

  @Authorized(PORTAL)
  @Mutation(() => EndpointSecretReveal, { description: 'A new signing secret at once, shown this once' })
  async portalRotateEndpointSecret(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<EndpointSecretReveal> {
    return runIdempotent(context, idempotencyKey, {
      operation: 'portalRotateEndpointSecret',
      params: { id },
      input: { etag },
      async run(ctx) {
        const rotated = await context.services.portal.rotateSecret(ctx, id, etag);
        return { endpoint: toEndpoint(rotated.endpoint), signingSecret: rotated.signingSecret };
      },
      stored: withoutSecret,
      replay: (stored, replay) => revealAgain(context, stored, replay),
    });
  }

  @Authorized(PORTAL)
  @Mutation(() => PortalSigningSecret, { description: "Reveals the endpoint's current signing secret (recorded)" })
  async portalRevealEndpointSecret(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
  ): Promise<PortalSigningSecret> {
    const revealed = await context.services.portal.revealSecret(callContext(context), id);
    return { endpoint: toEndpoint(revealed.endpoint), secret: revealed.secret, publicKey: revealed.publicKey };
  }

  @Authorized(PORTAL)
  @Mutation(() => Message, { description: 'Sends a test event (svc.test) to one of the tenant’s endpoints' })
  async portalSendTestEvent(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
  ): Promise<Message> {
    return toMessage(await context.services.portal.sendTest(callContext(context), endpointId));
  }

  @Authorized(PORTAL)
  @Mutation(() => Delivery, { description: 'A delivery waiting for a retry is attempted now (free)' })
  async portalRetryDelivery(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Delivery> {
    return toDelivery(await context.services.portal.retryNow(callContext(context), id));
  }

  @Authorized(PORTAL)
  @Mutation(() => Delivery, { description: "Replays a finished delivery, within the session's spending cap" })
  async portalReplayDelivery(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Delivery> {
    return runIdempotent(context, idempotencyKey, {
      operation: 'portalReplayDelivery',
      params: { id },
      input: {},
      run: async (ctx) => toDelivery(await context.services.portal.replay(ctx, id)),
    });
  }
}
