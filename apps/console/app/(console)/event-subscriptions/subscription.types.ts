export interface Subscription {
  id: string;
  url: string;
  events: string[];
  environmentIds: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  format: string;
  version: string;
  etag: string;
  secretRotationEndsAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface SubscriptionPage {
  nodes: Subscription[];
  nextCursor: string | null;
}

/** The subscription with its secret, shown once (null on an idempotent replay to another key). */
export interface SubscriptionReveal {
  subscription: Subscription;
  secret: string | null;
}

export interface SubscriptionInput {
  url: string;
  events: string[];
  environmentIds: string[];
  description: string;
  format: string;
}

export interface DeliveryAttempt {
  id: string;
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  errorKind: string | null;
  error: string | null;
  durationMs: number;
}

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  sequence: string;
  trigger: string;
  retryOf: string | null;
  status: string;
  ordered: boolean;
  attemptCount: number;
  nextAttemptAt: string | null;
  releasedAt: string | null;
  attempts: DeliveryAttempt[];
  createdAt: string;
}

export interface DeliveryPage {
  nodes: Delivery[];
  nextCursor: string | null;
}

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
