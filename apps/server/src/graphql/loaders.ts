import DataLoader from 'dataloader';
import type {
  AttemptView,
  CallContext,
  DeliveryTarget,
  DeliveryView,
  MessageView,
  OperationalEventView,
  Page,
  ReplayView,
  Services,
} from '@svc/core';

/** A page of a parent's list, as the field asks for it (`first`, `after`). */
interface ChildPageKey {
  limit?: number | undefined;
  cursor?: string | undefined;
}
type MessageDeliveriesKey = ChildPageKey & { messageId: string; createdAt: Date };
type DeliveryAttemptsKey = ChildPageKey & { deliveryId: string };
type EndpointReplaysKey = ChildPageKey & { endpointId: string };

/**
 * The per-parent fields of one request, loaded in batches: every parent of a level that asks for a field is served
 * by one statement (a page of 200 messages with their deliveries and their attempts is three statements, not
 * thousands). A loader batches what the resolvers ask for in the same tick, which is how GraphQL resolves the
 * items of a list. No cache: a mutation's later root fields must see what its earlier ones changed.
 */
export interface Loaders {
  /** `Message.deliveries`: a page of the message's deliveries (every generation, oldest first). */
  messageDeliveries: DataLoader<MessageDeliveriesKey, Page<DeliveryView>>;
  /** `Delivery.attempts`: a page of the delivery's attempts, oldest first. */
  deliveryAttempts: DataLoader<DeliveryAttemptsKey, Page<AttemptView>>;
  /** `Delivery.target`: where the delivery went (null for an ID the team has no delivery of). */
  deliveryTargets: DataLoader<string, DeliveryTarget | null>;
  /** `Delivery.earlierGenerations`: the same message to the same endpoint in lower generations, newest first. */
  earlierGenerations: DataLoader<string, DeliveryView[]>;
  /** `Endpoint.replays`: a page of the endpoint's bulk replays, oldest first. */
  endpointReplays: DataLoader<EndpointReplaysKey, Page<ReplayView>>;
  /** `Source.recentMessages`: the source's newest captures. */
  sourceCaptures: DataLoader<{ sourceId: string; limit: number }, MessageView[]>;
  /** `Source.recentRejections`: the source's newest `webhooks.source.rejected` events. */
  sourceRejections: DataLoader<{ sourceId: string; limit: number }, OperationalEventView[]>;
}

/** Made once the request is authenticated (Apollo copies the context per operation, so this is set on the copy). */
export function createLoaders(services: Services, ctx: CallContext): Loaders {
  // A batch is sent once the event loop's current turn is over (not at the next tick): every sibling field of a
  // level has asked by then, even when some resolvers took a few more promise hops than others (a level split in
  // two under load with the default schedule).
  const options = { cache: false, batchScheduleFn: (dispatch: () => void) => setImmediate(dispatch) } as const;
  return {
    messageDeliveries: new DataLoader<MessageDeliveriesKey, Page<DeliveryView>>(
      (keys) => services.deliveries.listDeliveriesOfMessages(ctx, keys),
      options,
    ),
    deliveryAttempts: new DataLoader<DeliveryAttemptsKey, Page<AttemptView>>(
      (keys) => services.deliveries.listAttemptsOfDeliveries(ctx, keys),
      options,
    ),
    deliveryTargets: new DataLoader<string, DeliveryTarget | null>(
      (ids) => services.deliveries.deliveryTargets(ctx, ids),
      options,
    ),
    earlierGenerations: new DataLoader<string, DeliveryView[]>(
      (ids) => services.deliveries.earlierGenerations(ctx, ids),
      options,
    ),
    endpointReplays: new DataLoader<EndpointReplaysKey, Page<ReplayView>>(
      (keys) => services.replays.listReplaysOfEndpoints(ctx, keys),
      options,
    ),
    sourceCaptures: new DataLoader(
      (keys) =>
        services.messages.recentCapturesOfSources(
          ctx,
          keys.map((key) => ({ sourceId: key.sourceId, limit: key.limit })),
        ),
      options,
    ),
    sourceRejections: new DataLoader(
      (keys) =>
        services.events.recentEventsOfResources(
          ctx,
          'webhooks.source.rejected',
          keys.map((key) => ({ resourceId: key.sourceId, limit: key.limit })),
        ),
      options,
    ),
  };
}
