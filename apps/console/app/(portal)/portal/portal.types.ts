import type {
  PortalContextQuery,
  PortalDeliveryFieldsFragment,
  PortalEndpointFieldsFragment,
  PortalEndpointStreamQuery,
  PortalEventTypesQuery,
  PortalMessageContentQuery,
  PortalMessageQuery,
} from '@/gql/graphql';

/** The shapes the portal reads from the API's portal* fields (docs/portal.md), as the generated types give them. */
export type PortalContext = PortalContextQuery['portalContext'];
export type PortalEndpoint = PortalEndpointFieldsFragment;
export type PortalDelivery = PortalDeliveryFieldsFragment;
/** A stream endpoint's stream URL, open connections and tokens (docs/streams.md). */
export type PortalEndpointStream = PortalEndpointStreamQuery['portalEndpointStream'];
export type PortalAttempt = PortalDelivery['attempts']['nodes'][number];
export type PortalEventType = PortalEventTypesQuery['portalEventTypes']['nodes'][number];
/** A message as listed (no deliveries) or opened (with its deliveries). */
export type PortalMessage = Omit<PortalMessageQuery['portalMessage'], 'deliveries'> & {
  deliveries?: PortalMessageQuery['portalMessage']['deliveries'];
};

/** A message's payload as accepted (text unless it is not UTF-8). */
export type PortalMessageContent = PortalMessageContentQuery['portalMessageContent'];

/** What the messages page searches by: one field and the value typed. */
export type PortalMessageSearchField = 'id' | 'externalId' | 'eventType';

/** One page of a portal list: its rows, and the cursor of the next page (null on the last). */
export interface PortalPage<T> {
  nodes: T[];
  nextCursor: string | null;
}
