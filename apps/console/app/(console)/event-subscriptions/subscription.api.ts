import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  DELIVERIES_PAGE_SIZE,
  SUBSCRIPTIONS_PAGE_SIZE,
  type DeliveryPage,
  type Subscription,
  type SubscriptionInput,
  type SubscriptionPage,
  type SubscriptionReveal,
} from './subscription.types';

const SubscribableEventsQuery = graphql(`
  query SubscribableEvents {
    subscribableEvents
  }
`);

graphql(`
  fragment EventSubscriptionFields on EventSubscription {
    id
    url
    events
    environmentIds
    description
    enabled
    disabledReason
    format
    version
    etag
    secretRotationEndsAt
    createdAt
    updatedAt
  }
`);

graphql(`
  fragment SubscriptionDeliveryFields on SubscriptionDelivery {
    id
    eventId
    eventType
    sequence
    trigger
    retryOf
    status
    ordered
    attemptCount
    nextAttemptAt
    releasedAt
    createdAt
    attempts {
      id
      attempt
      attemptedAt
      statusCode
      errorKind
      error
      durationMs
    }
  }
`);

const SubscriptionsQuery = graphql(`
  query Subscriptions($first: Int, $after: String) {
    eventSubscriptions(first: $first, after: $after) {
      nodes {
        ...EventSubscriptionFields
      }
      nextCursor
    }
  }
`);

const SubscriptionQuery = graphql(`
  query Subscription($id: ID!, $first: Int, $after: String) {
    eventSubscription(id: $id) {
      ...EventSubscriptionFields
    }
    eventSubscriptionDeliveries(subscriptionId: $id, first: $first, after: $after) {
      nodes {
        ...SubscriptionDeliveryFields
      }
      nextCursor
    }
  }
`);

const CreateSubscriptionMutation = graphql(`
  mutation CreateSubscription($input: CreateEventSubscriptionInput!, $idempotencyKey: String) {
    createEventSubscription(input: $input, idempotencyKey: $idempotencyKey) {
      subscription {
        ...EventSubscriptionFields
      }
      secret
    }
  }
`);

const UpdateSubscriptionMutation = graphql(`
  mutation UpdateSubscription($id: ID!, $etag: String!, $input: UpdateEventSubscriptionInput!) {
    updateEventSubscription(id: $id, etag: $etag, input: $input) {
      ...EventSubscriptionFields
    }
  }
`);

const DeleteSubscriptionMutation = graphql(`
  mutation DeleteSubscription($id: ID!, $etag: String) {
    deleteEventSubscription(id: $id, etag: $etag) {
      deleted
    }
  }
`);

const RotateSubscriptionSecretMutation = graphql(`
  mutation RotateSubscriptionSecret($id: ID!, $etag: String, $overlapSeconds: Int, $idempotencyKey: String) {
    rotateEventSubscriptionSecret(
      id: $id
      etag: $etag
      overlapSeconds: $overlapSeconds
      idempotencyKey: $idempotencyKey
    ) {
      subscription {
        ...EventSubscriptionFields
      }
      secret
    }
  }
`);

const TestSubscriptionMutation = graphql(`
  mutation TestSubscription($id: ID!) {
    testEventSubscription(id: $id) {
      eventId
    }
  }
`);

const RetryDeliveryMutation = graphql(`
  mutation RetryDelivery($subscriptionId: ID!, $deliveryId: ID!) {
    retryEventSubscriptionDelivery(subscriptionId: $subscriptionId, deliveryId: $deliveryId) {
      id
    }
  }
`);

export async function listSubscriptions(after: string | null): Promise<SubscriptionPage> {
  const data = await consoleRequest(SubscriptionsQuery, {
    first: SUBSCRIPTIONS_PAGE_SIZE,
    ...(after ? { after } : {}),
  });
  return data.eventSubscriptions;
}

export async function listSubscribableEvents(): Promise<string[]> {
  const data = await consoleRequest(SubscribableEventsQuery);
  return data.subscribableEvents;
}

export async function getSubscriptionWithDeliveries(
  id: string,
  after: string | null,
): Promise<{ subscription: Subscription; deliveries: DeliveryPage }> {
  const data = await consoleRequest(SubscriptionQuery, {
    id,
    first: DELIVERIES_PAGE_SIZE,
    ...(after ? { after } : {}),
  });
  return { subscription: data.eventSubscription, deliveries: data.eventSubscriptionDeliveries };
}

export async function createSubscription(
  input: SubscriptionInput,
  idempotencyKey: string | null,
): Promise<SubscriptionReveal> {
  const data = await consoleRequest(CreateSubscriptionMutation, { input, ...idempotencyVariable(idempotencyKey) });
  return data.createEventSubscription;
}

export async function updateSubscription(
  id: string,
  etag: string,
  input: Partial<SubscriptionInput> & { enabled?: boolean },
): Promise<Subscription> {
  const data = await consoleRequest(UpdateSubscriptionMutation, { id, etag, input });
  return data.updateEventSubscription;
}

export async function deleteSubscription(id: string, etag: string): Promise<void> {
  await consoleRequest(DeleteSubscriptionMutation, { id, etag });
}

export async function rotateSubscriptionSecret(
  id: string,
  etag: string,
  overlapSeconds: number,
  idempotencyKey: string | null,
): Promise<SubscriptionReveal> {
  const data = await consoleRequest(RotateSubscriptionSecretMutation, {
    id,
    etag,
    overlapSeconds,
    ...idempotencyVariable(idempotencyKey),
  });
  return data.rotateEventSubscriptionSecret;
}

export async function sendTestEvent(id: string): Promise<{ eventId: string }> {
  const data = await consoleRequest(TestSubscriptionMutation, { id });
  return data.testEventSubscription;
}

export async function retryDelivery(subscriptionId: string, deliveryId: string): Promise<{ id: string }> {
  const data = await consoleRequest(RetryDeliveryMutation, { subscriptionId, deliveryId });
  return data.retryEventSubscriptionDelivery;
}
