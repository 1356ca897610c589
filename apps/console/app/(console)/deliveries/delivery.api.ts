import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  DELIVERIES_PAGE_SIZE,
  type Delivery,
  type DeliveryFilters,
  type DeliveryPage,
  type ReplayConfiguration,
  type RecentDeliveries,
  type ReplayQuote,
} from './delivery.types';

graphql(`
  fragment DeliveryFields on Delivery {
    id
    messageId
    endpointId
    tenantId
    eventType
    generation
    kind
    replayOf
    status
    attemptCount
    nextAttemptAt
    lastStatusCode
    lastError
    lastAttemptAt
    expiresAt
    bodyBytes
    contentType
    transformed
    price {
      deliveryUnits
      totalUsd
    }
    createdAt
    finishedAt
  }
`);

graphql(`
  fragment AttemptFields on Attempt {
    id
    number
    trigger
    startedAt
    durationMs
    urlRevision
    statusCode
    errorKind
    outcome
    responseBody
    responseBodyEncoding
  }
`);

const DeliveriesQuery = graphql(`
  query Deliveries(
    $first: Int
    $after: String
    $status: DeliveryStatus
    $tenantId: ID
    $endpointId: ID
    $eventType: String
    $createdAfter: DateTimeISO
    $createdBefore: DateTimeISO
  ) {
    deliveries(
      first: $first
      after: $after
      status: $status
      tenantId: $tenantId
      endpointId: $endpointId
      eventType: $eventType
      createdAfter: $createdAfter
      createdBefore: $createdBefore
    ) {
      nodes {
        ...DeliveryFields
      }
      nextCursor
    }
  }
`);

const ReplayQuoteQuery = graphql(`
  query ReplayQuote($deliveryIds: [ID!]!, $configuration: ReplayConfiguration) {
    replayQuote(deliveryIds: $deliveryIds, configuration: $configuration) {
      items {
        deliveryId
        replayable
        errorCode
        reason
        deliveryUnits
        totalUsd
      }
      deliveryUnits
      totalUsd
    }
  }
`);

const ReplayDeliveryMutation = graphql(`
  mutation ReplayDelivery($id: ID!, $configuration: ReplayConfiguration, $idempotencyKey: String) {
    replayDelivery(id: $id, configuration: $configuration, idempotencyKey: $idempotencyKey) {
      ...DeliveryFields
    }
  }
`);

const RetryDeliveryNowMutation = graphql(`
  mutation RetryDeliveryNow($id: ID!, $idempotencyKey: String) {
    retryDeliveryNow(id: $id, idempotencyKey: $idempotencyKey) {
      ...DeliveryFields
    }
  }
`);

/** Deliveries oldest first within the window (the API's default window is the last 30 days). */
export async function listDeliveries(
  filters: Partial<DeliveryFilters>,
  page: { after: string | null; first?: number },
): Promise<DeliveryPage> {
  const data = await consoleRequest(
    DeliveriesQuery,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: page.first ?? DELIVERIES_PAGE_SIZE,
      ...(page.after ? { after: page.after } : {}),
      ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)),
    },
  );
  return data.deliveries;
}

/** How far back the endpoint page looks, widest first; a busy endpoint gets a narrower window. */
const RECENT_WINDOWS = [
  { label: 'the last 24 hours', ms: 24 * 3_600_000 },
  { label: 'the last hour', ms: 3_600_000 },
  { label: 'the last 5 minutes', ms: 300_000 },
] as const;
const RECENT_PAGES_PER_WINDOW = 3;
const RECENT_PAGE_SIZE = 200;

/**
 * The endpoint's newest deliveries, newest first. The list is oldest first within a window, so this pages to the
 * end of the last 24 hours; an endpoint too busy for that within a few pages is read over a shorter window.
 */
export async function listRecentEndpointDeliveries(endpointId: string, count: number): Promise<RecentDeliveries> {
  const now = Date.now();
  let newest: Delivery[] = [];
  for (const window of RECENT_WINDOWS) {
    const createdAfter = new Date(now - window.ms).toISOString();
    let after: string | null = null;
    newest = [];
    for (let pages = 0; pages < RECENT_PAGES_PER_WINDOW; pages++) {
      const page: DeliveryPage = await listDeliveries({ endpointId, createdAfter }, { after, first: RECENT_PAGE_SIZE });
      newest = [...newest, ...page.nodes].slice(-count);
      after = page.nextCursor;
      if (after === null) return { deliveries: newest.reverse(), windowLabel: window.label, complete: true };
    }
  }
  return { deliveries: newest.reverse(), windowLabel: RECENT_WINDOWS.at(-1)!.label, complete: false };
}

/** The price of replaying these deliveries now, and which of them cannot be replayed and why. */
export async function quoteReplays(deliveryIds: string[], configuration: ReplayConfiguration): Promise<ReplayQuote> {
  const data = await consoleRequest(ReplayQuoteQuery, { deliveryIds, configuration });
  return data.replayQuote;
}

/** A paid new generation of a finished delivery; `idempotencyKey` makes a resubmit return the first replay. */
export async function replayDelivery(
  id: string,
  configuration: ReplayConfiguration,
  idempotencyKey: string | null,
): Promise<Delivery> {
  const data = await consoleRequest(ReplayDeliveryMutation, {
    id,
    configuration,
    ...idempotencyVariable(idempotencyKey),
  });
  return data.replayDelivery;
}

/** A delivery waiting for its retry becomes due now; free, it uses one of its remaining attempts. */
export async function retryDeliveryNow(id: string, idempotencyKey: string | null): Promise<Delivery> {
  const data = await consoleRequest(RetryDeliveryNowMutation, { id, ...idempotencyVariable(idempotencyKey) });
  return data.retryDeliveryNow;
}
