/** Something the team should know about (a delivery failed, an endpoint was disabled, ...), from the events feed. */
export interface OperationalEvent {
  id: string;
  type: string;
  /** When the first occurrence happened. */
  createdAt: string;
  resourceId: string;
  tenantId: string;
  resourceVersion: string;
  /** The first occurrence's data: IDs, counts, status codes and reasons only. */
  data: Record<string, string | number | boolean | null>;
  /** True when a burst of occurrences was folded into this one event. */
  coalesced: boolean;
  count: number;
  /** Resource IDs of the first and the last occurrence folded in. */
  firstId: string;
  lastId: string;
}

export interface OperationalEventPage {
  nodes: OperationalEvent[];
  /** Set on every non-empty page: where to continue later. Null on an empty page (continue from the same place). */
  nextCursor: string | null;
}

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
] as const;
