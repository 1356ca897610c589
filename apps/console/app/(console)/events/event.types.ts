import type { EventsQuery, OperationalEventFieldsFragment } from '@/gql/graphql';

/** Something the team should know about (a delivery failed, an endpoint was disabled, ...), from the events feed. */
export type OperationalEvent = OperationalEventFieldsFragment;

export type OperationalEventPage = EventsQuery['events'];

export interface EventFilters {
  type: string;
  resourceId: string;
  tenantId: string;
}

/** The API fields the feed filters by, so their refusals show at the filters. */
export const EVENT_FILTER_FIELDS = ['type', 'resource_id', 'tenant_id'] as const;

export const EVENTS_PAGE_SIZE = 100;

/** The event types the feed carries (docs/events.md). */
export const OPERATIONAL_EVENT_TYPES = [
  'webhooks.delivery.failed',
  'webhooks.delivery.expired',
  'webhooks.endpoint.disabled',
  'webhooks.endpoint.recovered',
  'webhooks.endpoint.failing',
  'webhooks.endpoint.held',
  'webhooks.source.rejected',
  'webhooks.replay.completed',
  'webhooks.replay.failed',
  'webhooks.budget.blocked',
  'webhooks.worker.sealing_key_mismatch',
] as const;
