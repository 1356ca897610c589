import { Authorized, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: "Number of the message's original deliveries in each status" })
export class DeliveryCounts {
  @Field(() => Int) scheduled!: number;
  @Field(() => Int) queued!: number;
  @Field(() => Int) inFlight!: number;
  @Field(() => Int) retryWait!: number;
  @Field(() => Int) succeeded!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Int) expired!: number;
  @Field(() => Int) canceled!: number;
}

@ObjectType({ description: 'What the message cost, priced by the rate version in force when it was accepted' })
export class MessagePrice {
  @Field(() => Int) ingestUnits!: number;
  @Field(() => Int) deliveryUnits!: number;
  @Field(() => String, { description: 'Exact decimal USD' }) totalUsd!: string;
  @Field(() => String) rateVersion!: string;
}

@ObjectType({ description: 'An accepted event of one tenant and one event type, with immutable bytes' })
export class Message {
  @Field(() => ID, { description: 'Also the webhook-id header of every delivery' }) id!: string;
  @Field(() => ID) tenantId!: string;
  @Field(() => String) eventType!: string;
  @Field(() => String, { nullable: true, description: 'Your own lookup ID (not deduplicated)' }) externalId!:
    string | null;
  @Field(() => String, { description: 'api, test or source' }) origin!: string;
  @Field(() => ID, { nullable: true }) sourceId!: string | null;
  @Field(() => String, {
    description:
      'scheduled, queued, delivering, succeeded, partially_failed, failed, canceled or no_destinations; ' +
      'derived from the original deliveries',
  })
  status!: string;
  @Field(() => Int) bodyBytes!: number;
  @Field(() => String, {
    nullable: true,
    description: 'Hex SHA-256 of the body; null once the message is redacted (erased with the body)',
  })
  bodySha256!: string | null;
  @Field(() => String) contentType!: string;
  @Field(() => Date) deliverAt!: Date;
  @Field(() => Date, { description: 'No attempt starts at or after this time' }) expiresAt!: Date;
  @Field(() => Date) retainedUntil!: Date;
  @Field(() => Boolean) contentAvailable!: boolean;
  @Field(() => DeliveryCounts) deliveryCounts!: DeliveryCounts;
  @Field(() => Int, {
    description:
      'How many of the failed or expired original deliveries a later generation (a replay) has delivered since; ' +
      'the status stays derived from deliveryCounts',
  })
  repairedCount!: number;
  // What the operator pays: refused to a receivers' portal session (docs/portal.md).
  @Authorized()
  @Field(() => MessagePrice)
  price!: MessagePrice;
  @Field(() => Boolean) redacted!: boolean;
  @Field(() => String, { nullable: true, description: 'redacting or complete' }) redactionStatus!: string | null;
  @Field(() => Date, { nullable: true }) redactedAt!: Date | null;
  @Field(() => GraphQLJSONObject) metadata!: Record<string, string>;
  @Field(() => Date) createdAt!: Date;
}

@InputType({ description: 'A message to publish; it fans out to every matching endpoint of the tenant' })
export class PublishMessageInput {
  @Field(() => ID) tenantId!: string;
  @Field(() => String, { description: 'An active event type of the catalog' }) eventType!: string;
  @Field(() => String, {
    description: 'JSON text (any JSON value, null included), delivered as written minus whitespace outside strings',
  })
  payload!: string;
  @Field(() => [ID], {
    nullable: true,
    description: 'Up to 100 endpoints of the tenant; null selects every matching enabled or paused endpoint',
  })
  endpointIds?: string[] | null;
  @Field(() => String, { nullable: true }) externalId?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown> | null;
}

@ObjectType()
export class MessageConnection {
  @Field(() => [Message]) nodes!: Message[];
  @Field(() => String, {
    nullable: true,
    description: 'A status filter applies within each page: a page may be short while nextCursor is set',
  })
  nextCursor!: string | null;
}

@ObjectType({ description: 'The accepted bytes of a message, until redaction or the end of its retention' })
export class MessageContent {
  @Field(() => String) contentType!: string;
  @Field(() => Int) bytes!: number;
  @Field(() => String, { description: 'The exact bytes, base64' }) bodyBase64!: string;
  @Field(() => String, { nullable: true, description: 'The bytes as text; null unless they are valid UTF-8' })
  text!: string | null;
}

@ObjectType({ description: 'What canceling a message did to its original deliveries (replays are untouched)' })
export class CancelMessageResult {
  @Field(() => ID) messageId!: string;
  @Field(() => Int, { description: 'Canceled now' }) canceledCount!: number;
  @Field(() => Int, { description: 'An attempt is running: it finishes, its retries are canceled' })
  inFlightCount!: number;
  @Field(() => Int, { description: 'Already succeeded, failed, expired or canceled' }) alreadyTerminalCount!: number;
}

@ObjectType()
export class RedactMessageResult {
  @Field(() => ID) messageId!: string;
  @Field(() => String, { description: 'redacting, then complete once the sweep has removed every copy' })
  status!: string;
  @Field(() => Date) redactedAt!: Date;
}
