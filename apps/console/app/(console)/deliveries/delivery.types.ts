export interface DeliveryPrice {
  deliveryUnits: number;
  totalUsd: string;
}

/** One message to one endpoint in one generation (0 the original, 1.. replays). */
export interface Delivery {
  id: string;
  messageId: string;
  endpointId: string;
  tenantId: string;
  eventType: string;
  generation: number;
  /** original or replay */
  kind: string;
  /** The delivery this one replays. */
  replayOf: string | null;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  /** Why the last attempt failed or the delivery ended (error kind or reason). */
  lastError: string | null;
  lastAttemptAt: string | null;
  expiresAt: string;
  bodyBytes: number;
  contentType: string;
  transformed: boolean;
  price: DeliveryPrice;
  createdAt: string;
  finishedAt: string | null;
  /** For a dead letter, the later generation of its message to its endpoint that succeeded (a replay repaired it). */
  repairedBy: string | null;
}

/** One HTTP request to the receiver. */
export interface Attempt {
  id: string;
  number: number;
  /** scheduled, retry, probe or retry_now */
  trigger: string;
  startedAt: string;
  durationMs: number;
  urlRevision: number;
  statusCode: number | null;
  /** timeout, network_error, ...; null when the receiver answered. */
  errorKind: string | null;
  /** succeeded or failed */
  outcome: string;
  /** Kept only with response body logging, within the response retention. */
  responseBody: string | null;
  /** utf8 or base64 */
  responseBodyEncoding: string | null;
}

export interface DeliveryWithAttempts extends Delivery {
  attempts: { nodes: Attempt[]; nextCursor: string | null };
}

export interface DeliveryPage {
  nodes: Delivery[];
  nextCursor: string | null;
}

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
}

/** The API's list orders: oldest first (its default, the spec's) or newest first (an extension). */
export type ListOrder = 'oldest' | 'newest';

export type ReplayConfiguration = 'frozen' | 'current';

export interface ReplayQuoteItem {
  deliveryId: string;
  replayable: boolean;
  /** The error a replay would answer (invalid_state, payload_expired, ...). */
  errorCode: string | null;
  reason: string | null;
  deliveryUnits: number;
  totalUsd: string;
  /** Already repaired by this later generation: replayable, and charged again if replayed. */
  repairedBy: string | null;
}

export interface ReplayQuote {
  items: ReplayQuoteItem[];
  /** Every replayable item, repaired ones included. */
  deliveryUnits: number;
  totalUsd: string;
  repairedCount: number;
  /** The replayable items not yet repaired. */
  unrepairedDeliveryUnits: number;
  unrepairedTotalUsd: string;
}

/** One replay of a batch: the new generation, or why the API refused it. */
export type ReplayOutcome =
  { deliveryId: string; ok: true; replay: Delivery } | { deliveryId: string; ok: false; code: string; message: string };

export const DELIVERIES_PAGE_SIZE = 50;
/** The most deliveries one replay quote (and so one selection) may hold. */
export const MAX_REPLAY_SELECTION = 200;

export const DELIVERY_STATUSES = [
  'scheduled',
  'queued',
  'in_flight',
  'retry_wait',
  'succeeded',
  'failed',
  'expired',
  'canceled',
] as const;

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
