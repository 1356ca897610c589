import type { DeliveryWithAttempts } from '../deliveries/delivery.types';
import type {
  CancelMessageMutation,
  MessageContentQuery,
  MessageFieldsFragment,
  MessagesQuery,
  RedactMessageMutation,
} from '@/gql/graphql';
import { MessageStatus } from '@/gql/enums';

export type DeliveryCounts = MessageFieldsFragment['deliveryCounts'];

export type MessagePrice = MessageFieldsFragment['price'];

export type Message = MessageFieldsFragment;

export type MessagePage = MessagesQuery['messages'];

/** What the message search filters by; empty values are not sent. */
export interface MessageFilters {
  /** API timestamps (RFC 3339). */
  createdAfter: string;
  createdBefore: string;
  tenantId: string;
  eventType: string;
  sourceId: string;
  status: string;
  externalId: string;
}

/** The message search's values as the URL holds them. */
export interface MessageSearch {
  createdAfter: string;
  createdBefore: string;
  tenant: string;
  eventType: string;
  sourceId: string;
  status: string;
  externalId: string;
}

/** The API fields the search filters by, so their refusals show at the filters. */
export const MESSAGE_FILTER_FIELDS = [
  'created_after',
  'created_before',
  'tenant_id',
  'event_type',
  'source_id',
  'status',
  'external_id',
] as const;

/** The accepted bytes: `text` is null unless they are valid UTF-8. */
export type MessageContent = MessageContentQuery['messageContent'];

/** The message with every delivery of every generation, each with its attempts (oldest first). */
export interface MessageInspection {
  message: Message;
  deliveries: DeliveryWithAttempts[];
  /** False when the message has more deliveries than the page shows. */
  deliveriesComplete: boolean;
}

export type CancelMessageResult = CancelMessageMutation['cancelMessage'];

export type RedactMessageResult = RedactMessageMutation['redactMessage'];

export const MESSAGES_PAGE_SIZE = 50;

/** The statuses a message list filters by, from the schema's MessageStatus enum. */
export const MESSAGE_STATUSES: readonly MessageStatus[] = Object.values(MessageStatus);

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

/** Original deliveries that may still be attempted: what a cancel would stop. */
export function pendingOriginals(counts: DeliveryCounts): number {
  return counts.scheduled + counts.queued + counts.inFlight + counts.retryWait;
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

/** The non-zero delivery counts in a few words: "2 succeeded, 1 failed". */
export function countsSummary(counts: DeliveryCounts): string {
  const parts = DELIVERY_COUNT_LABELS.filter(({ key }) => counts[key] > 0).map(
    ({ key, label }) => `${counts[key]} ${label.toLowerCase()}`,
  );
  return parts.length === 0 ? 'none' : parts.join(', ');
}
