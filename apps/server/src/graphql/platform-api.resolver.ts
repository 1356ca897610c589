import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import {
  CreateEnvironmentInput,
  CreateSubscriptionInput,
  ListPlatformEventsQuery,
  ListPlatformPageQuery,
  ListSubscriptionDeliveriesQuery,
  parseInput,
  PutFlagInput,
  RotateSubscriptionSecretInput,
  SUBSCRIBABLE_EVENTS,
  UpdateSubscriptionInput,
  type CallContext,
  type EnvironmentView,
  type FlagView,
  type PlatformEventView,
  type SubscriptionDeliveryView,
  type SubscriptionView,
  type SubscriptionWithSecret,
} from '@svc/core';
import { SubscriptionDeliveryStatus } from './enums.js';
import { callContext, type GraphqlContext } from './context.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined, rawJsonArgument } from './mappers.js';
import {
  CreateEventSubscriptionInput,
  DeletedEventSubscription,
  EventSubscription,
  EventSubscriptionConnection,
  EventSubscriptionWithSecret,
  FeatureFlag,
  FeatureFlagConnection,
  FeatureFlagEnvironment,
  FeatureFlagEnvironmentConnection,
  PlatformEvent,
  PlatformEventConnection,
  QueuedDeliveryRetry,
  QueuedTestEvent,
  SubscriptionDelivery,
  SubscriptionDeliveryConnection,
  UpdateEventSubscriptionInput,
} from './platform-api.types.js';

export function toEnvironment(view: EnvironmentView): FeatureFlagEnvironment {
  return { ...view };
}

export function toFlag(view: FlagView): FeatureFlag {
  return { ...view, value: view.value.text };
}

export function toSubscription(view: SubscriptionView): EventSubscription {
  return { ...view };
}

function toDelivery(view: SubscriptionDeliveryView): SubscriptionDelivery {
  return { ...view, attempts: view.attempts.map((attempt) => ({ ...attempt })) };
}

function toPlatformEvent(view: PlatformEventView): PlatformEvent {
  return { ...view };
}

const page = (first?: number | null, after?: string | null) =>
  defined({ limit: first ?? undefined, cursor: after ?? undefined });

/**
 * The platform API for the console (REST: /v1/platform): feature-flag environments and flags, event subscriptions,
 * their deliveries and the team's events. Same services, same error codes; secrets only in the answers that show
 * them once.
 */
@Resolver()
export class PlatformResolver {
  @Authorized()
  @Query(() => FeatureFlagEnvironmentConnection, { description: 'Feature-flag environments, oldest first' })
  async featureFlagEnvironments(
    @Ctx() context: GraphqlContext,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<FeatureFlagEnvironmentConnection> {
    const result = await context.services.featureFlags.listEnvironments(
      callContext(context),
      parseInput(ListPlatformPageQuery, page(first, after)),
    );
    return { nodes: result.data.map(toEnvironment), nextCursor: result.nextCursor };
  }

  @Authorized()
  @Query(() => FeatureFlagEnvironment)
  async featureFlagEnvironment(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
  ): Promise<FeatureFlagEnvironment> {
    return toEnvironment(await context.services.featureFlags.getEnvironment(callContext(context), id));
  }

  @Authorized()
  @Query(() => FeatureFlagConnection, { description: "An environment's flags in key order" })
  async featureFlags(
    @Ctx() context: GraphqlContext,
    @Arg('environmentId', () => ID) environmentId: string,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<FeatureFlagConnection> {
    const result = await context.services.featureFlags.listFlags(
      callContext(context),
      environmentId,
      parseInput(ListPlatformPageQuery, page(first, after)),
    );
    return { nodes: result.data.map(toFlag), nextCursor: result.nextCursor };
  }

  @Authorized()
  @Query(() => FeatureFlag)
  async featureFlag(
    @Ctx() context: GraphqlContext,
    @Arg('environmentId', () => ID) environmentId: string,
    @Arg('key', () => String) key: string,
  ): Promise<FeatureFlag> {
    return toFlag(await context.services.featureFlags.getFlag(callContext(context), environmentId, key));
  }

  @Authorized()
  @Mutation(() => FeatureFlagEnvironment)
  async createFeatureFlagEnvironment(
    @Ctx() context: GraphqlContext,
    @Arg('name', () => String) name: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<FeatureFlagEnvironment> {
    const parsed = parseInput(CreateEnvironmentInput, { name });
    return runIdempotent(context, idempotencyKey, {
      operation: 'createFeatureFlagEnvironment',
      input: parsed,
      run: async (ctx) => toEnvironment(await context.services.featureFlags.createEnvironment(ctx, parsed)),
    });
  }

  @Authorized()
  @Mutation(() => FeatureFlag, {
    description:
      'Creates the flag (no etag) or replaces it (etag of the flag required); each change raises the environment ' +
      'revision and writes one feature_flags.flag.updated event. value is JSON text (default null).',
  })
  async putFeatureFlag(
    @Ctx() context: GraphqlContext,
    @Arg('environmentId', () => ID) environmentId: string,
    @Arg('key', () => String) key: string,
    @Arg('enabled', () => Boolean) enabled: boolean,
    @Arg('description', () => String, { nullable: true }) description?: string | null,
    @Arg('value', () => String, { nullable: true }) value?: string | null,
    @Arg('etag', () => String, { nullable: true }) etag?: string | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<FeatureFlag> {
    const parsed = parseInput(
      PutFlagInput,
      defined({ enabled, description: description ?? undefined, value: rawJsonArgument(value, 'value') ?? undefined }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'putFeatureFlag',
      params: { environmentId, key, etag: etag ?? '' },
      input: parsed,
      run: async (ctx) =>
        toFlag((await context.services.featureFlags.putFlag(ctx, environmentId, key, etag ?? '', parsed)).flag),
    });
  }

  @Authorized()
  @Mutation(() => Boolean)
  async deleteFeatureFlag(
    @Ctx() context: GraphqlContext,
    @Arg('environmentId', () => ID) environmentId: string,
    @Arg('key', () => String) key: string,
    @Arg('etag', () => String) etag: string,
  ): Promise<boolean> {
    await context.services.featureFlags.deleteFlag(callContext(context), environmentId, key, etag);
    return true;
  }

  @Authorized()
  @Query(() => [String], { description: 'Event names a subscription may list' })
  subscribableEvents(): string[] {
    return [...SUBSCRIBABLE_EVENTS];
  }

  @Authorized()
  @Query(() => EventSubscriptionConnection, { description: 'Event subscriptions, oldest first' })
  async eventSubscriptions(
    @Ctx() context: GraphqlContext,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<EventSubscriptionConnection> {
    const result = await context.services.subscriptions.listSubscriptions(
      callContext(context),
      parseInput(ListPlatformPageQuery, page(first, after)),
    );
    return { nodes: result.data.map(toSubscription), nextCursor: result.nextCursor };
  }

  @Authorized()
  @Query(() => EventSubscription)
  async eventSubscription(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<EventSubscription> {
    return toSubscription(await context.services.subscriptions.getSubscription(callContext(context), id));
  }

  @Authorized()
  @Mutation(() => EventSubscriptionWithSecret, { description: 'Subscribes a receiver; the secret is shown once' })
  async createEventSubscription(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => CreateEventSubscriptionInput) input: CreateEventSubscriptionInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<EventSubscriptionWithSecret> {
    const parsed = parseInput(
      CreateSubscriptionInput,
      defined({
        url: input.url,
        events: input.events,
        environment_ids: input.environmentIds,
        description: input.description ?? undefined,
        format: input.format ?? undefined,
      }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'createEventSubscription',
      input: parsed,
      run: async (ctx) => reveal(await context.services.subscriptions.createSubscription(ctx, parsed)),
      stored: withoutSecret,
      replay: (stored, replay) => revealAgain(context, stored, replay),
    });
  }

  @Authorized()
  @Mutation(() => EventSubscription, { description: 'Changes the subscription (etag required); a new version' })
  async updateEventSubscription(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String) etag: string,
    @Arg('input', () => UpdateEventSubscriptionInput) input: UpdateEventSubscriptionInput,
  ): Promise<EventSubscription> {
    const parsed = parseInput(
      UpdateSubscriptionInput,
      defined({
        url: input.url ?? undefined,
        events: input.events ?? undefined,
        environment_ids: input.environmentIds ?? undefined,
        description: input.description ?? undefined,
        format: input.format ?? undefined,
        enabled: input.enabled ?? undefined,
      }),
    );
    return toSubscription(
      await context.services.subscriptions.updateSubscription(callContext(context), id, etag, parsed),
    );
  }

  @Authorized()
  @Mutation(() => DeletedEventSubscription, { description: 'Deletes it; pending deliveries are canceled' })
  async deleteEventSubscription(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String, { nullable: true }) etag?: string | null,
  ): Promise<DeletedEventSubscription> {
    return context.services.subscriptions.deleteSubscription(callContext(context), id, etag ?? '');
  }

  @Authorized()
  @Mutation(() => EventSubscriptionWithSecret, {
    description:
      'A new secret, shown once; the previous one keeps signing for overlapSeconds (default 86400; 0 retires it ' +
      'at once). While one is in its overlap only 0 is accepted (invalid_state).',
  })
  async rotateEventSubscriptionSecret(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('etag', () => String, { nullable: true }) etag?: string | null,
    @Arg('overlapSeconds', () => Int, { nullable: true }) overlapSeconds?: number | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<EventSubscriptionWithSecret> {
    const parsed = parseInput(RotateSubscriptionSecretInput, defined({ overlap_seconds: overlapSeconds ?? undefined }));
    return runIdempotent(context, idempotencyKey, {
      operation: 'rotateEventSubscriptionSecret',
      params: { id, etag: etag ?? '' },
      input: parsed,
      run: async (ctx) => reveal(await context.services.subscriptions.rotateSecret(ctx, id, etag ?? '', parsed)),
      stored: withoutSecret,
      replay: (stored, replay) => revealAgain(context, stored, replay),
    });
  }

  @Authorized()
  @Mutation(() => QueuedTestEvent, { description: 'Queues a feature_flags.webhook.test event for this subscription' })
  async testEventSubscription(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<QueuedTestEvent> {
    return runIdempotent(context, idempotencyKey, {
      operation: 'testEventSubscription',
      params: { id },
      input: {},
      run: (ctx) => context.services.subscriptions.sendTestEvent(ctx, id),
    });
  }

  @Authorized()
  @Query(() => SubscriptionDeliveryConnection, {
    description: "A subscription's deliveries with their attempts, newest first, 30 days",
  })
  async eventSubscriptionDeliveries(
    @Ctx() context: GraphqlContext,
    @Arg('subscriptionId', () => ID) subscriptionId: string,
    @Arg('status', () => SubscriptionDeliveryStatus, { nullable: true }) status?: string | null,
    @Arg('eventId', () => ID, { nullable: true }) eventId?: string | null,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<SubscriptionDeliveryConnection> {
    const result = await context.services.subscriptionHistory.listDeliveries(
      callContext(context),
      subscriptionId,
      parseInput(
        ListSubscriptionDeliveriesQuery,
        defined({ status: status ?? undefined, event_id: eventId ?? undefined, ...page(first, after) }),
      ),
    );
    return { nodes: result.data.map(toDelivery), nextCursor: result.nextCursor };
  }

  @Authorized()
  @Mutation(() => QueuedDeliveryRetry, {
    description: "A new delivery of the delivery's original event, attempted once now, outside the commit order",
  })
  async retryEventSubscriptionDelivery(
    @Ctx() context: GraphqlContext,
    @Arg('subscriptionId', () => ID) subscriptionId: string,
    @Arg('deliveryId', () => ID) deliveryId: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<QueuedDeliveryRetry> {
    return runIdempotent(context, idempotencyKey, {
      operation: 'retryEventSubscriptionDelivery',
      params: { subscriptionId, deliveryId },
      input: {},
      run: (ctx) => context.services.subscriptionHistory.retryDelivery(ctx, subscriptionId, deliveryId),
    });
  }

  @Authorized()
  @Query(() => PlatformEventConnection, { description: "The team's platform events, newest first, 30 days" })
  async platformEvents(
    @Ctx() context: GraphqlContext,
    @Arg('type', () => String, { nullable: true }) type?: string | null,
    @Arg('environmentId', () => ID, { nullable: true }) environmentId?: string | null,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<PlatformEventConnection> {
    const result = await context.services.subscriptionHistory.listEvents(
      callContext(context),
      parseInput(
        ListPlatformEventsQuery,
        defined({ type: type ?? undefined, environment_id: environmentId ?? undefined, ...page(first, after) }),
      ),
    );
    return { nodes: result.data.map(toPlatformEvent), nextCursor: result.nextCursor };
  }

  @Authorized()
  @Query(() => PlatformEvent)
  async platformEvent(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<PlatformEvent> {
    return toPlatformEvent(await context.services.subscriptionHistory.getEvent(callContext(context), id));
  }
}

function reveal(result: SubscriptionWithSecret): EventSubscriptionWithSecret {
  return { subscription: toSubscription(result.subscription), secret: result.secret };
}

/** Idempotency keeps the subscription without its secret. */
function withoutSecret(result: EventSubscriptionWithSecret): { subscription: EventSubscription } {
  return { subscription: result.subscription };
}

/** A replay shows the secret only to the key that made it, while the subscription is still at that version. */
async function revealAgain(
  context: GraphqlContext,
  stored: unknown,
  replay: { ctx: CallContext; sameKey: boolean },
): Promise<EventSubscriptionWithSecret> {
  const { subscription } = stored as { subscription: EventSubscription };
  if (!replay.sameKey) return { subscription, secret: null };
  const secret = await context.services.subscriptions.secretForReplay(
    replay.ctx,
    subscription.id,
    subscription.version,
  );
  return { subscription, secret };
}
