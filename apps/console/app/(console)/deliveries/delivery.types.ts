import type {
  AttemptFieldsFragment,
  DeliveriesQuery,
  DeliveryFieldsFragment,
  InspectedDeliveriesFragment,
  ListOrder as GeneratedListOrder,
  ReplayConfiguration as GeneratedReplayConfiguration,
  ReplayQuoteQuery,
} from '@/gql/graphql';

export type DeliveryPrice = DeliveryFieldsFragment['price'];

/** One message to one endpoint in one generation (0 the original, 1.. replays). */
export type Delivery = DeliveryFieldsFragment;

/** One HTTP request to the receiver. */
export type Attempt = AttemptFieldsFragment;

export type DeliveryWithAttempts = InspectedDeliveriesFragment['nodes'][number];

export type DeliveryPage = DeliveriesQuery['deliveries'];

/** A listed delivery; with `withGenerations`, its earlier generations (same message and endpoint), newest first. */
export type ListedDelivery = DeliveryPage['nodes'][number];

export type EarlierGeneration = NonNullable<ListedDelivery['earlierGenerations']>[number];

/** What the dead letters and endpoint lists filter by; empty values are not sent. */
export interface DeliveryFilters {
  status: string;
  tenantId: string;
  endpointId: string;
  eventType: string;
  /** API timestamps (RFC 3339). */
  createdAfter: string;
  createdBefore: string;
  /** false leaves repaired dead letters out, true lists only them; absent lists both. */
  repaired: boolean;
  /** An ordered endpoint's Svc-Sequence number (with endpointId), as typed; empty: not sent. */
  sequence: string;
  /** Dead letters only: a failure and its failed replays as one row, the newest (earlierGenerations holds the rest). */
  latestGeneration: boolean;
}

/** The API's list orders: oldest first (its default, the spec's) or newest first (an extension). */
export type ListOrder = GeneratedListOrder;

export type ReplayConfiguration = GeneratedReplayConfiguration;

export type ReplayQuoteItem = ReplayQuoteQuery['replayQuote']['items'][number];

export type ReplayQuote = ReplayQuoteQuery['replayQuote'];

/** One replay of a batch: the new generation, or why the API refused it. */
export type ReplayOutcome =
  { deliveryId: string; ok: true; replay: Delivery } | { deliveryId: string; ok: false; code: string; message: string };

export const DELIVERIES_PAGE_SIZE = 50;

/** Statuses in which an attempt may still start or is running. */
const PENDING: readonly string[] = ['scheduled', 'queued', 'in_flight', 'retry_wait'];

export function isPendingDelivery(status: string): boolean {
  return PENDING.includes(status);
}

/** Finished deliveries a replay may send again (canceled ones may not). */
export function isReplayable(status: string): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'expired';
}

/** The last attempt's result in a few words: its status code, or why it failed without one. */
export function lastResult(delivery: Pick<Delivery, 'lastStatusCode' | 'lastError'>): string | null {
  const { lastStatusCode: code, lastError: error } = delivery;
  // http_400 says nothing the code does not; http_503_attempts_exhausted does.
  if (code !== null && error !== null && error !== `http_${code}`) return `${code} (${error})`;
  if (delivery.lastStatusCode !== null) return String(delivery.lastStatusCode);
  return delivery.lastError;
}
