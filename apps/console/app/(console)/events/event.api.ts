import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
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
  query Events($first: Int, $after: String, $type: String, $resourceId: String, $tenantId: ID) {
    events(first: $first, after: $after, type: $type, resourceId: $resourceId, tenantId: $tenantId) {
      nodes {
        ...OperationalEventFields
      }
      nextCursor
    }
  }
`);

/** The feed oldest first, from the start of its 30 days or from `after` (a nextCursor of an earlier page). */
export async function listEvents(filters: Partial<EventFilters>, after: string | null): Promise<OperationalEventPage> {
  const data = await consoleRequest(
    EventsQuery,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: EVENTS_PAGE_SIZE,
      ...(after ? { after } : {}),
      ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)),
    },
  );
  return data.events;
}
