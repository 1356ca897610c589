import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import {
  DELIVERIES_PAGE_SIZE,
  SUBSCRIPTIONS_PAGE_SIZE,
  type DeliveryPage,
  type Subscription,
  type SubscriptionInput,
  type SubscriptionPage,
  type SubscriptionReveal,
} from './subscription.types';

const SUBSCRIPTION_FIELDS = `id url events environmentIds description enabled disabledReason format version etag
  secretRotationEndsAt createdAt updatedAt`;
const DELIVERY_FIELDS = `id eventId eventType sequence trigger retryOf status ordered attemptCount nextAttemptAt
  releasedAt createdAt attempts { id attempt attemptedAt statusCode errorKind error durationMs }`;

export async function listSubscriptions(after: string | null): Promise<SubscriptionPage> {
  const data = await consoleRequest<{ eventSubscriptions: SubscriptionPage }>(
    `query Subscriptions($first: Int, $after: String) {
      eventSubscriptions(first: $first, after: $after) { nodes { ${SUBSCRIPTION_FIELDS} } nextCursor }
    }`,
    { first: SUBSCRIPTIONS_PAGE_SIZE, ...(after ? { after } : {}) },
  );
  return data.eventSubscriptions;
}

export async function listSubscribableEvents(): Promise<string[]> {
  const data = await consoleRequest<{ subscribableEvents: string[] }>('query Events { subscribableEvents }');
  return data.subscribableEvents;
}

export async function getSubscriptionWithDeliveries(
  id: string,
  after: string | null,
): Promise<{ subscription: Subscription; deliveries: DeliveryPage }> {
  const data = await consoleRequest<{ eventSubscription: Subscription; eventSubscriptionDeliveries: DeliveryPage }>(
    `query Subscription($id: ID!, $first: Int, $after: String) {
      eventSubscription(id: $id) { ${SUBSCRIPTION_FIELDS} }
      eventSubscriptionDeliveries(subscriptionId: $id, first: $first, after: $after) {
        nodes { ${DELIVERY_FIELDS} } nextCursor
      }
    }`,
    { id, first: DELIVERIES_PAGE_SIZE, ...(after ? { after } : {}) },
  );
  return { subscription: data.eventSubscription, deliveries: data.eventSubscriptionDeliveries };
}

export async function createSubscription(
  input: SubscriptionInput,
  idempotencyKey: string | null,
): Promise<SubscriptionReveal> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ createEventSubscription: SubscriptionReveal }>(
    `mutation CreateSubscription($input: CreateEventSubscriptionInput!${idem.declaration}) {
      createEventSubscription(input: $input${idem.argument}) { subscription { ${SUBSCRIPTION_FIELDS} } secret }
    }`,
    { input, ...idem.variables },
  );
  return data.createEventSubscription;
}

export async function updateSubscription(
  id: string,
  etag: string,
  input: Partial<SubscriptionInput> & { enabled?: boolean },
): Promise<Subscription> {
  const data = await consoleRequest<{ updateEventSubscription: Subscription }>(
    `mutation UpdateSubscription($id: ID!, $etag: String!, $input: UpdateEventSubscriptionInput!) {
      updateEventSubscription(id: $id, etag: $etag, input: $input) { ${SUBSCRIPTION_FIELDS} }
    }`,
    { id, etag, input },
  );
  return data.updateEventSubscription;
}

export async function deleteSubscription(id: string, etag: string): Promise<void> {
  await consoleRequest<{ deleteEventSubscription: { deleted: boolean } }>(
    `mutation DeleteSubscription($id: ID!, $etag: String) { deleteEventSubscription(id: $id, etag: $etag) { deleted } }`,
    { id, etag },
  );
}

export async function rotateSubscriptionSecret(
  id: string,
  etag: string,
  overlapSeconds: number,
  idempotencyKey: string | null,
): Promise<SubscriptionReveal> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ rotateEventSubscriptionSecret: SubscriptionReveal }>(
    `mutation RotateSubscriptionSecret($id: ID!, $etag: String, $overlapSeconds: Int${idem.declaration}) {
      rotateEventSubscriptionSecret(id: $id, etag: $etag, overlapSeconds: $overlapSeconds${idem.argument}) {
        subscription { ${SUBSCRIPTION_FIELDS} } secret
      }
    }`,
    { id, etag, overlapSeconds, ...idem.variables },
  );
  return data.rotateEventSubscriptionSecret;
}

export async function sendTestEvent(id: string): Promise<{ eventId: string }> {
  const data = await consoleRequest<{ testEventSubscription: { eventId: string } }>(
    `mutation TestSubscription($id: ID!) { testEventSubscription(id: $id) { eventId } }`,
    { id },
  );
  return data.testEventSubscription;
}

export async function retryDelivery(subscriptionId: string, deliveryId: string): Promise<{ id: string }> {
  const data = await consoleRequest<{ retryEventSubscriptionDelivery: { id: string } }>(
    `mutation RetryDelivery($subscriptionId: ID!, $deliveryId: ID!) {
      retryEventSubscriptionDelivery(subscriptionId: $subscriptionId, deliveryId: $deliveryId) { id }
    }`,
    { subscriptionId, deliveryId },
  );
  return data.retryEventSubscriptionDelivery;
}
