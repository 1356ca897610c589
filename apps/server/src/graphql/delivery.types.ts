import { Authorized, Field, Float, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'What the delivery costs (one delivery meter)' })
export class DeliveryPrice {
  @Field(() => Int) deliveryUnits!: number;
  @Field(() => String, { description: 'Exact decimal USD' }) totalUsd!: string;
}

@ObjectType({ description: 'One message to one endpoint, in one generation (0 the original, 1.. replays)' })
export class Delivery {
  @Field(() => ID) id!: string;
  @Field(() => ID) messageId!: string;
  @Field(() => ID) endpointId!: string;
  @Field(() => ID) tenantId!: string;
  @Field(() => String) eventType!: string;
  @Field(() => Int, { description: '0 for the original delivery, then 1, 2, ... for each replay' }) generation!: number;
  @Field(() => String, { description: 'original or replay' }) kind!: string;
  @Field(() => ID, { nullable: true, description: 'The delivery this one replays' }) replayOf!: string | null;
  @Field(() => ID, { nullable: true, description: 'The bulk replay job that created it' }) replayId!: string | null;
  @Field(() => String, {
    description: 'scheduled, queued, in_flight, retry_wait, succeeded, failed, expired or canceled',
  })
  status!: string;
  @Field(() => Int) attemptCount!: number;
  @Field(() => Date, { nullable: true, description: 'Null once finished or while an attempt runs' })
  nextAttemptAt!: Date | null;
  @Field(() => Int, { nullable: true }) lastStatusCode!: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'Why the last attempt failed or the delivery ended; null after a success',
  })
  lastError!: string | null;
  @Field(() => Date, { nullable: true }) lastAttemptAt!: Date | null;
  @Field(() => Date, { description: 'No attempt starts at or after this time' }) expiresAt!: Date;
  @Field(() => Int) bodyBytes!: number;
  @Field(() => String) contentType!: string;
  @Field(() => Boolean, { description: 'Whether the endpoint gets transformed bytes rather than the content' })
  transformed!: boolean;
  // What the operator pays: refused to a receivers' portal session (docs/portal.md).
  @Authorized()
  @Field(() => DeliveryPrice)
  price!: DeliveryPrice;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
  @Field(() => ID, {
    nullable: true,
    description:
      'For a failed or expired delivery, the first later generation of its message to its endpoint that succeeded ' +
      '(a replay repaired it; the status stays); null otherwise',
  })
  repairedBy!: string | null;
  @Field(() => Float, {
    nullable: true,
    description:
      "An ordered endpoint's number for this delivery (the Svc-Sequence header, a whole number); null on endpoints " +
      'that do not order and for a scheduled delivery until it comes due',
  })
  sequence!: number | null;
}

@ObjectType({ description: 'Where a delivery went: its endpoint and the URL of the revision its attempt used' })
export class DeliveryTarget {
  @Field(() => String) endpointName!: string;
  @Field(() => String, {
    description: 'The URL of the revision the last attempt went to (the next attempt goes to, before any)',
  })
  url!: string;
  @Field(() => Int) urlRevision!: number;
  @Field(() => Boolean, {
    description: 'false: that revision predates URL recording (migration 0038) and url is the current URL instead',
  })
  urlRecorded!: boolean;
}

@ObjectType({
  description: 'An earlier generation of a delivery (its message to its endpoint): a summary, with no nested lists',
})
export class EarlierGeneration {
  @Field(() => ID) id!: string;
  @Field(() => Int) generation!: number;
  @Field(() => String, { description: 'original or replay' }) kind!: string;
  @Field(() => String) status!: string;
  @Field(() => Int, { nullable: true }) lastStatusCode!: number | null;
  @Field(() => String, { nullable: true }) lastError!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
}

@ObjectType()
export class DeliveryConnection {
  @Field(() => [Delivery]) nodes!: Delivery[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'Milliseconds each phase of an attempt took; null for a phase it did not reach' })
export class AttemptPhaseTimings {
  @Field(() => Int, { nullable: true }) dns!: number | null;
  @Field(() => Int, { nullable: true }) connect!: number | null;
  @Field(() => Int, { nullable: true }) tls!: number | null;
  @Field(() => Int, { nullable: true, description: 'From the start of the attempt to the response headers' })
  firstByte!: number | null;
  @Field(() => Int) total!: number;
}

@ObjectType({ description: 'Where and why an attempt without an HTTP answer failed (an extension)' })
export class AttemptErrorDetail {
  @Field(() => String, { description: 'dns, connect, tls, request (no response headers yet) or response' })
  phase!: string;
  @Field(() => String, { description: 'no_such_host, refused, timeout, reset, certificate_expired, ...' })
  cause!: string;
  @Field(() => String, { nullable: true, description: 'The error code it was read from (ECONNREFUSED, ...)' })
  code!: string | null;
  @Field(() => String, { nullable: true, description: 'The IP address connected to, or refused by the URL rules' })
  address!: string | null;
  @Field(() => Int, { nullable: true }) port!: number | null;
  @Field(() => Boolean, { description: 'Sent over a keep-alive connection an earlier attempt opened' })
  connectionReused!: boolean;
  @Field(() => AttemptPhaseTimings) timingsMs!: AttemptPhaseTimings;
}

@ObjectType({ description: 'One HTTP request of a delivery to its receiver' })
export class Attempt {
  @Field(() => ID) id!: string;
  @Field(() => ID) deliveryId!: string;
  @Field(() => ID) endpointId!: string;
  @Field(() => Int) number!: number;
  @Field(() => String, { description: 'scheduled, retry, probe or retry_now' }) trigger!: string;
  @Field(() => Date) startedAt!: Date;
  @Field(() => Int) durationMs!: number;
  @Field(() => Int, { description: "The endpoint's URL revision the request went to" }) urlRevision!: number;
  @Field(() => Int, { nullable: true }) statusCode!: number | null;
  @Field(() => String, { nullable: true, description: 'timeout, network, ...; null when the receiver answered' })
  errorKind!: string | null;
  @Field(() => AttemptErrorDetail, {
    nullable: true,
    description: 'Where and why it failed when there was no HTTP answer; null when answered or not recorded',
  })
  errorDetail!: AttemptErrorDetail | null;
  @Field(() => String, { description: 'succeeded or failed' }) outcome!: string;
  @Field(() => String, {
    nullable: true,
    description: 'Up to 4 KiB of the response, kept only with response body logging, within the response retention',
  })
  responseBody!: string | null;
  @Field(() => String, { nullable: true, description: 'utf8 or base64; null without a body' })
  responseBodyEncoding!: string | null;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType()
export class AttemptConnection {
  @Field(() => [Attempt]) nodes!: Attempt[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'Whether one delivery can be replayed and what its replay costs' })
export class ReplayQuoteItem {
  @Field(() => ID) deliveryId!: string;
  @Field(() => Boolean) replayable!: boolean;
  @Field(() => String, {
    nullable: true,
    description: 'The error a replay would answer (invalid_state, payload_expired, transform_failed, not_found)',
  })
  errorCode!: string | null;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => Int) deliveryUnits!: number;
  @Field(() => String, { description: 'Exact decimal USD' }) totalUsd!: string;
  @Field(() => ID, {
    nullable: true,
    description:
      'Already repaired: the later generation that succeeded. It can still be replayed, and is charged again ' +
      '(a bulk replay skips it)',
  })
  repairedBy!: string | null;
}

@ObjectType({ description: 'The price of replaying a selection of deliveries; nothing is charged or stored' })
export class ReplayQuote {
  @Field(() => [ReplayQuoteItem]) items!: ReplayQuoteItem[];
  @Field(() => Int) deliveryUnits!: number;
  @Field(() => String, { description: 'Exact decimal USD' }) totalUsd!: string;
  @Field(() => Int, { description: 'Items already repaired (repairedBy set)' }) repairedCount!: number;
  @Field(() => Int, { description: 'The delivery units of the replayable items not yet repaired' })
  unrepairedDeliveryUnits!: number;
  @Field(() => String, { description: 'Exact decimal USD of the replayable items not yet repaired' })
  unrepairedTotalUsd!: string;
}
