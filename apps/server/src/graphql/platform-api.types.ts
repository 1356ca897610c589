import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: 'A feature-flag environment; its revision moves with every committed flag change in it' })
export class FeatureFlagEnvironment {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: 'Decimal string' }) revision!: string;
  @Field(() => String) etag!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class FeatureFlagEnvironmentConnection {
  @Field(() => [FeatureFlagEnvironment]) nodes!: FeatureFlagEnvironment[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'A feature flag of an environment' })
export class FeatureFlag {
  @Field(() => ID) environmentId!: string;
  @Field(() => String, { description: '1 to 128 letters, digits, _, . or -' }) key!: string;
  @Field(() => Boolean) enabled!: boolean;
  @Field(() => String) description!: string;
  @Field(() => String, { description: 'The JSON value served when enabled, as its exact (minified) text' })
  value!: string;
  @Field(() => String, { description: 'Moves by one with every change of this flag' }) version!: string;
  @Field(() => String, { description: "The environment's revision at this flag's last change" }) revision!: string;
  @Field(() => String, { description: 'Pass back as etag to change or delete the flag' }) etag!: string;
  @Field(() => ID) createdBy!: string;
  @Field(() => ID) updatedBy!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class FeatureFlagConnection {
  @Field(() => [FeatureFlag]) nodes!: FeatureFlag[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'An event subscription (REST: a whe_ endpoint); never its secret' })
export class EventSubscription {
  @Field(() => ID) id!: string;
  @Field(() => String) url!: string;
  @Field(() => [String]) events!: string[];
  @Field(() => [ID]) environmentIds!: string[];
  @Field(() => String) description!: string;
  @Field(() => Boolean) enabled!: boolean;
  @Field(() => String, { nullable: true, description: 'disabled_by_user, endpoint_gone or chat_webhook_gone' })
  disabledReason!: string | null;
  @Field(() => String, { description: 'svc, chat_a (Slack), chat_b (Microsoft Teams) or chat_c (Discord)' })
  format!: string;
  @Field(() => String) version!: string;
  @Field(() => String, { description: 'Pass back as etag to change the subscription' }) etag!: string;
  @Field(() => Date, { nullable: true, description: 'Until when the previous secret still signs' })
  secretRotationEndsAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class EventSubscriptionConnection {
  @Field(() => [EventSubscription]) nodes!: EventSubscription[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({
  description:
    'Returned only by createEventSubscription and rotateEventSubscriptionSecret: the secret is shown this once (an ' +
    'idempotent replay shows it again only to the key that made it while nothing changed since; otherwise null)',
})
export class EventSubscriptionWithSecret {
  @Field(() => EventSubscription) subscription!: EventSubscription;
  @Field(() => String, { nullable: true }) secret!: string | null;
}

@ObjectType()
export class DeletedEventSubscription {
  @Field(() => ID) id!: string;
  @Field(() => Boolean) deleted!: boolean;
  @Field(() => Boolean, { description: 'An attempt was on the wire; it completes and is recorded' })
  inFlightMayComplete!: boolean;
}

@ObjectType({ description: 'One attempt of a subscription delivery' })
export class SubscriptionDeliveryAttempt {
  @Field(() => ID) id!: string;
  @Field(() => Int) attempt!: number;
  @Field(() => Date) attemptedAt!: Date;
  @Field(() => Int, { nullable: true }) statusCode!: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'null when acknowledged; http_status, timeout, network_error, tls_error or unsafe_destination',
  })
  errorKind!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => Int) durationMs!: number;
}

@ObjectType({ description: 'A delivery of a platform event to a subscription, with its attempts' })
export class SubscriptionDelivery {
  @Field(() => ID) id!: string;
  @Field(() => ID) subscriptionId!: string;
  @Field(() => ID) eventId!: string;
  @Field(() => String) eventType!: string;
  @Field(() => String) sequence!: string;
  @Field(() => String, { description: 'event, or manual (a retry)' }) trigger!: string;
  @Field(() => ID, { nullable: true }) retryOf!: string | null;
  @Field(() => String, { description: 'pending, succeeded, failed or canceled' }) status!: string;
  @Field(() => Boolean) ordered!: boolean;
  @Field(() => Int) attemptCount!: number;
  @Field(() => Date, { nullable: true }) nextAttemptAt!: Date | null;
  @Field(() => Date, { nullable: true }) releasedAt!: Date | null;
  @Field(() => [SubscriptionDeliveryAttempt]) attempts!: SubscriptionDeliveryAttempt[];
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class SubscriptionDeliveryConnection {
  @Field(() => [SubscriptionDelivery]) nodes!: SubscriptionDelivery[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'A platform event (feature_flags.flag.updated, feature_flags.webhook.test)' })
export class PlatformEvent {
  @Field(() => ID) id!: string;
  @Field(() => String) type!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => ID) teamId!: string;
  @Field(() => ID, { nullable: true }) environmentId!: string | null;
  @Field(() => String, { nullable: true }) revision!: string | null;
  @Field(() => GraphQLJSONObject) data!: Record<string, unknown>;
}

@ObjectType()
export class PlatformEventConnection {
  @Field(() => [PlatformEvent]) nodes!: PlatformEvent[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType()
export class QueuedTestEvent {
  @Field(() => ID) eventId!: string;
  @Field(() => ID) endpointId!: string;
}

@ObjectType()
export class QueuedDeliveryRetry {
  @Field(() => ID, { description: 'The new delivery' }) id!: string;
  @Field(() => ID) eventId!: string;
}

@InputType()
export class CreateEventSubscriptionInput {
  @Field(() => String) url!: string;
  @Field(() => [String]) events!: string[];
  @Field(() => [ID]) environmentIds!: string[];
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) format?: string | null;
}

@InputType()
export class UpdateEventSubscriptionInput {
  @Field(() => String, { nullable: true }) url?: string | null;
  @Field(() => [String], { nullable: true }) events?: string[] | null;
  @Field(() => [ID], { nullable: true }) environmentIds?: string[] | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true }) format?: string | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
}
