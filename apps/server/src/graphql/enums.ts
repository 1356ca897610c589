import { registerEnumType } from 'type-graphql';
import {
  ANALYTICS_BUCKETS,
  DELIVERY_MODES,
  DELIVERY_STATUSES,
  LIST_ORDERS,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  ListSubscriptionDeliveriesQuery,
  MESSAGE_STATUSES,
  ReplayDeliveryInput,
  ORDERING_ON_FAILURE,
  ORDERINGS,
  SIGNATURE_SCHEMES,
} from '@svc/core';

/**
 * The closed sets of values the filter and option arguments take, as GraphQL enums made from the same declarations
 * the services validate with: a client learns them from the schema and GraphQL refuses any other value before a
 * resolver runs. Values keep the REST spelling (lowercase), so a query sends the same words as a REST call.
 */
function enumOf<const T extends string>(values: readonly T[]): { [K in T]: K } {
  return Object.fromEntries(values.map((value) => [value, value])) as { [K in T]: K };
}

export const MessageStatus = enumOf(MESSAGE_STATUSES);
export const DeliveryStatus = enumOf(DELIVERY_STATUSES);
export const DeliveryKind = enumOf(ListDeliveriesQuery.shape.kind.unwrap().options);
export const EndpointStatus = enumOf(ListEndpointsQuery.shape.status.unwrap().options);
export const AnalyticsBucket = enumOf(ANALYTICS_BUCKETS);
export const ReplayConfiguration = enumOf(ReplayDeliveryInput.shape.configuration.unwrap().options);
export const SignatureScheme = enumOf(SIGNATURE_SCHEMES);
export const DeliveryMode = enumOf(DELIVERY_MODES);
export const EndpointOrdering = enumOf(ORDERINGS);
export const OrderingOnFailure = enumOf(ORDERING_ON_FAILURE);
export const ListOrder = enumOf(LIST_ORDERS);
export const SubscriptionDeliveryStatus = enumOf(ListSubscriptionDeliveriesQuery.shape.status.unwrap().options);

registerEnumType(MessageStatus, {
  name: 'MessageStatus',
  description: "A message's status, derived from its original deliveries",
});
registerEnumType(DeliveryStatus, { name: 'DeliveryStatus', description: "A delivery's status" });
registerEnumType(DeliveryKind, { name: 'DeliveryKind', description: 'original (generation 0) or replay' });
registerEnumType(EndpointStatus, { name: 'EndpointStatus', description: "An endpoint's status" });
registerEnumType(AnalyticsBucket, { name: 'AnalyticsBucket', description: 'Buckets aligned to UTC hours or days' });
registerEnumType(ReplayConfiguration, {
  name: 'ReplayConfiguration',
  description:
    "frozen: the bytes the delivery was sent with; current: the endpoint's current transform applied to the " +
    'original content',
});
registerEnumType(SignatureScheme, {
  name: 'SignatureScheme',
  description:
    'hmac: v1 signatures with a shared whsec_ secret; ed25519: v1a signatures that receivers check with the ' +
    "endpoint's whpk_ public key (Standard Webhooks)",
});
registerEnumType(DeliveryMode, {
  name: 'DeliveryMode',
  description:
    "push: the service POSTs each delivery to the endpoint's URL; stream: the endpoint has no URL, its receiver " +
    'opens GET /v1/endpoints/{id}/stream with a stream token and acknowledges each delivery (docs/streams.md)',
});
registerEnumType(EndpointOrdering, {
  name: 'EndpointOrdering',
  description:
    'none: deliveries go independently (up to maxConcurrency at once); ordered: one at a time, in the order the ' +
    'messages were admitted, each with an Svc-Sequence header',
});
registerEnumType(OrderingOnFailure, {
  name: 'OrderingOnFailure',
  description:
    'What a delivery that ends without success does to an ordered endpoint: continue (it is a dead letter and ' +
    'the next goes) or hold (the endpoint is paused until someone enables it)',
});
registerEnumType(SubscriptionDeliveryStatus, {
  name: 'SubscriptionDeliveryStatus',
  description: "An event subscription delivery's status",
});
registerEnumType(ListOrder, {
  name: 'ListOrder',
  description:
    'The order of messages, deliveries and events (an extension): oldest first (the default) or newest first; a ' +
    'cursor continues only the order it was made in',
});
