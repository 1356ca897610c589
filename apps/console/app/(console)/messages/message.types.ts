export interface DeliveryCounts {
  scheduled: number;
  queued: number;
  inFlight: number;
  retryWait: number;
  succeeded: number;
  failed: number;
  expired: number;
  canceled: number;
}

export interface MessagePrice {
  ingestUnits: number;
  deliveryUnits: number;
  totalUsd: string;
  rateVersion: string;
}

export interface Message {
  id: string;
  tenantId: string;
  eventType: string;
  externalId: string | null;
  origin: string;
  sourceId: string | null;
  status: string;
  bodyBytes: number;
  bodySha256: string;
  contentType: string;
  deliverAt: string;
  expiresAt: string;
  retainedUntil: string;
  contentAvailable: boolean;
  deliveryCounts: DeliveryCounts;
  price: MessagePrice;
  redacted: boolean;
  redactionStatus: string | null;
  redactedAt: string | null;
  metadata: Record<string, string>;
  createdAt: string;
}

export interface PublishMessageInput {
  tenantId: string;
  eventType: string;
  /** JSON text, sent exactly as typed. */
  payload: string;
  externalId: string | null;
  metadata: Record<string, string>;
}

/** An event type the publish form offers (active ones only: archived types refuse new messages). */
export interface EventTypeChoice {
  name: string;
  description: string;
}

/** Statuses after which a message no longer changes (replays have their own statuses). */
export const TERMINAL_STATUSES: readonly string[] = [
  'succeeded',
  'partially_failed',
  'failed',
  'canceled',
  'no_destinations',
];

export function isTerminal(status: string): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** The delivery counts in the order a delivery moves through them, with the names the API uses. */
export const DELIVERY_COUNT_LABELS: readonly { key: keyof DeliveryCounts; label: string }[] = [
  { key: 'scheduled', label: 'Scheduled' },
  { key: 'queued', label: 'Queued' },
  { key: 'inFlight', label: 'In flight' },
  { key: 'retryWait', label: 'Retry wait' },
  { key: 'succeeded', label: 'Succeeded' },
  { key: 'failed', label: 'Failed' },
  { key: 'expired', label: 'Expired' },
  { key: 'canceled', label: 'Canceled' },
];

export const DEFAULT_TEST_PAYLOAD = '{"test":true}';
