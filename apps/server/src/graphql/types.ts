import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: 'A customer of the operator' })
export class Tenant {
  @Field(() => ID) id!: string;
  @Field(() => String) externalId!: string;
  @Field(() => String) name!: string;
  @Field(() => GraphQLJSONObject) metadata!: Record<string, string>;
  @Field(() => String, { description: 'active or deleted' }) status!: string;
  @Field(() => String) version!: string;
  @Field(() => String, { description: 'Pass back to mutations as the If-Match precondition' }) etag!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class TenantConnection {
  @Field(() => [Tenant]) nodes!: Tenant[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'An entry of the event type catalog' })
export class EventType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) description!: string;
  @Field(() => String, { nullable: true, description: 'The example JSON exactly as written' }) example!: string | null;
  @Field(() => Boolean) archived!: boolean;
  @Field(() => String) version!: string;
  @Field(() => String) etag!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class EventTypeConnection {
  @Field(() => [EventType]) nodes!: EventType[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType()
export class Limit {
  @Field(() => String) name!: string;
  @Field(() => Float) value!: number;
  @Field(() => String) unit!: string;
  @Field(() => Boolean) measured!: boolean;
}

@ObjectType()
export class Settings {
  @Field(() => String) configurationVersion!: string;
  @Field(() => String) approvedConfigurationVersion!: string;
  @Field(() => Int) payloadRetentionDays!: number;
  @Field(() => Boolean) responseBodyLogging!: boolean;
  @Field(() => Int) responseRetentionDays!: number;
  @Field(() => [String], { description: "The origins allowed to frame the receivers' portal (docs/portal.md)" })
  portalFrameOrigins!: string[];
  @Field(() => String) etag!: string;
  @Field(() => [Limit]) limits!: Limit[];
}

@ObjectType()
export class Meter {
  @Field(() => String) id!: string;
  @Field(() => String) unit!: string;
  @Field(() => Int) unitBytes!: number;
  @Field(() => String) unitPriceUsd!: string;
}

@ObjectType()
export class Rates {
  @Field(() => String) currency!: string;
  @Field(() => String) version!: string;
  @Field(() => Date) effectiveAt!: Date;
  @Field(() => [Meter]) meters!: Meter[];
}

@ObjectType()
export class Capabilities {
  @Field(() => String) serviceId!: string;
  @Field(() => String) region!: string;
  @Field(() => [String]) egressIpv4Cidrs!: string[];
  @Field(() => Boolean) ipv6Delivery!: boolean;
  @Field(() => [String]) verificationKinds!: string[];
  @Field(() => [String]) contentTypes!: string[];
  @Field(() => [Limit]) limits!: Limit[];
  @Field(() => String) rateVersion!: string;
}

@ObjectType({ description: 'The team of the signed-in key' })
export class Viewer {
  @Field(() => ID) teamId!: string;
  @Field(() => String) teamName!: string;
}

@InputType()
export class CreateTenantInput {
  @Field(() => String) externalId!: string;
  @Field(() => String) name!: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
}

@InputType()
export class UpdateTenantInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
}

@InputType()
export class CreateEventTypeInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => String, { nullable: true, description: 'JSON text, kept exactly as written' }) example?: string | null;
}

@InputType()
export class UpdateEventTypeInput {
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => String, { nullable: true, description: 'JSON text; null clears the example' }) example?: string | null;
}

@InputType()
export class UpdateSettingsInput {
  @Field(() => Int, { nullable: true }) payloadRetentionDays?: number;
  @Field(() => Boolean, { nullable: true }) responseBodyLogging?: boolean;
  @Field(() => Int, { nullable: true }) responseRetentionDays?: number;
  @Field(() => [String], { nullable: true }) portalFrameOrigins?: string[];
}
