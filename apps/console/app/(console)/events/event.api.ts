import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import type { ListOrder } from '../deliveries/delivery.types';
import { EVENTS_PAGE_SIZE, type EventFilters, type OperationalEventPage } from './event.types';

graphql(`
  fragment OperationalEventFields on OperationalEvent {
    id
    type
    createdAt
    resourceId
    tenantId
    resourceVersion
    data
    coalesced
    count
    firstId
    lastId
  }
`);

const EventsQuery = graphql(`
  query Events($first: Int, $after: String, $type: String, $resourceId: String, $tenantId: ID, $order: ListOrder) {
    events(first: $first, after: $after, type: $type, resourceId: $resourceId, tenantId: $tenantId, order: $order) {
      nodes {
        ...OperationalEventFields
      }
      nextCursor
    }
  }
`);

/**
 * The feed of the last 30 days from `after` (a nextCursor of an earlier page of the same order), or from its start:
 * oldest first (commit order, the API's default), or newest first, which ends (nextCursor null on the last page).
 */
export async function listEvents(
  filters: Partial<EventFilters>,
  after: string | null,
  order: ListOrder = 'oldest',
): Promise<OperationalEventPage> {
  const data = await consoleRequest(
    EventsQuery,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: EVENTS_PAGE_SIZE,
      order,
      ...(after ? { after } : {}),
      ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)),
    },
  );
  return data.events;
}
