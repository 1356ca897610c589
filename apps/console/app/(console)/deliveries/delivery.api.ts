import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  DELIVERIES_PAGE_SIZE,
  type Delivery,
  type DeliveryFilters,
  type DeliveryPage,
  type ListOrder,
  type ReplayConfiguration,
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
    repairedBy
    sequence
    target {
      endpointName
      url
      urlRevision
      urlRecorded
    }
  }
`);

graphql(`
  fragment AttemptErrorDetailFields on AttemptErrorDetail {
    phase
    cause
    code
    address
    port
    connectionReused
    timingsMs {
      dns
      connect
      tls
      firstByte
      total
    }
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
    errorDetail {
      ...AttemptErrorDetailFields
    }
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
    $repaired: Boolean
    $sequence: Float
    $latestGeneration: Boolean
    $order: ListOrder
    $withGenerations: Boolean = false
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
      repaired: $repaired
      sequence: $sequence
      latestGeneration: $latestGeneration
      order: $order
    ) {
      nodes {
        ...DeliveryFields
        earlierGenerations @include(if: $withGenerations) {
          id
          generation
          kind
          status
          lastStatusCode
          lastError
          createdAt
          finishedAt
        }
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
        repairedBy
      }
      deliveryUnits
      totalUsd
      repairedCount
      unrepairedDeliveryUnits
      unrepairedTotalUsd
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

/**
 * Deliveries within the window (the API's default window is the last 30 days), oldest first unless `page.order` is
 * newest. A cursor continues only the order it was made in, so the next page must be asked with the same order.
 */
export async function listDeliveries(
  filters: Partial<DeliveryFilters>,
  page: { after: string | null; first?: number; order?: ListOrder; withGenerations?: boolean },
): Promise<DeliveryPage> {
  const { repaired, latestGeneration, sequence, ...text } = filters;
  const data = await consoleRequest(
    DeliveriesQuery,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: page.first ?? DELIVERIES_PAGE_SIZE,
      ...(page.after ? { after: page.after } : {}),
      ...(page.order ? { order: page.order } : {}),
      ...(repaired === undefined ? {} : { repaired }),
      ...(latestGeneration === undefined ? {} : { latestGeneration }),
      ...(page.withGenerations ? { withGenerations: true } : {}),
      // A number the API refuses (sequence) is sent as typed, so the refusal shows at the field; NaN is sent as -1.
      ...(sequence ? { sequence: Number.isFinite(Number(sequence)) ? Number(sequence) : -1 } : {}),
      ...Object.fromEntries(Object.entries(text).filter(([, value]) => value)),
    },
  );
  return data.deliveries;
}

/** The endpoint's newest deliveries of the last 30 days (every message and generation), newest first. */
export async function listRecentEndpointDeliveries(endpointId: string, count: number): Promise<Delivery[]> {
  const page = await listDeliveries({ endpointId }, { after: null, first: count, order: 'newest' });
  return page.nodes;
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
