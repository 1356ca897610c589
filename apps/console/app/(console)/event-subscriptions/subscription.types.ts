import type {
  CreateSubscriptionMutation,
  EventSubscriptionFieldsFragment,
  SubscriptionDeliveryFieldsFragment,
  SubscriptionQuery,
  SubscriptionsQuery,
} from '@/gql/graphql';

export type Subscription = EventSubscriptionFieldsFragment;

export type SubscriptionPage = SubscriptionsQuery['eventSubscriptions'];

/** The subscription with its secret, shown once (null on an idempotent replay to another key). */
export type SubscriptionReveal = CreateSubscriptionMutation['createEventSubscription'];

export interface SubscriptionInput {
  url: string;
  events: string[];
  environmentIds: string[];
  description: string;
  format: string;
}

export type DeliveryAttempt = Delivery['attempts'][number];

export type Delivery = SubscriptionDeliveryFieldsFragment;

export type DeliveryPage = SubscriptionQuery['eventSubscriptionDeliveries'];

/** The formats with the names people know them by. */
export const FORMAT_LABELS: Record<string, string> = {
  svc: 'Standard JSON (Svc-Signature)',
  chat_a: 'Slack',
  chat_b: 'Microsoft Teams',
  chat_c: 'Discord',
};

export const DISABLED_REASONS: Record<string, string> = {
  disabled_by_user: 'disabled by a user',
  endpoint_gone: 'the receiver answered 410 Gone',
  chat_webhook_gone: 'the chat webhook is gone or revoked',
};

export const SUBSCRIPTIONS_PAGE_SIZE = 50;
export const DELIVERIES_PAGE_SIZE = 50;
