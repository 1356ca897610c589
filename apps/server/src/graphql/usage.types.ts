import { Field, Float, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: "One meter's units and money at one rate version" })
export class MeterUsage {
  @Field(() => String, { description: 'webhooks.ingest_64k or webhooks.delivery_16k' }) meter!: string;
  @Field(() => String, { description: 'The rate version that priced these units' }) rateVersion!: string;
  @Field(() => String, { description: 'Always unit' }) unit!: string;
  @Field(() => Float, { description: 'Billable units, an integer' }) units!: number;
  @Field(() => String, { description: 'USD as an exact decimal string' }) totalUsd!: string;
}

@ObjectType({ description: "One paying key's billing month" })
export class KeyUsage {
  @Field(() => ID) keyId!: string;
  @Field(() => String, {
    nullable: true,
    description: "The operator's label for the key (admin CLI); null when it has none",
  })
  label!: string | null;
  @Field(() => String, {
    nullable: true,
    description: "The key's monthly spending limit in USD (when the month closed, for a closed month); null: none",
  })
  spendingLimitUsd!: string | null;
  @Field(() => String) spentUsd!: string;
  @Field(() => String, { nullable: true, description: 'What is left of the limit (never below 0); null without one' })
  remainingUsd!: string | null;
  @Field(() => [MeterUsage]) meters!: MeterUsage[];
}

@ObjectType({ description: 'A billing month: 00:00 UTC of its first day to 00:00 UTC of the next (exclusive)' })
export class BillingPeriod {
  @Field(() => Date) start!: Date;
  @Field(() => Date, { description: 'Spending limits reset at this time' }) end!: Date;
}

@ObjectType({ description: "What the team's keys were charged on one UTC day" })
export class DailySpend {
  @Field(() => String, { description: 'YYYY-MM-DD (UTC)' }) day!: string;
  @Field(() => String) totalUsd!: string;
}

@ObjectType({ description: "The team's usage by meter and by paying key in one billing month (GET /meta/usage)" })
export class Usage {
  @Field(() => String, { description: 'YYYY-MM (UTC)' }) month!: string;
  @Field(() => String, { description: 'open (the current month) or closed (an ended month, frozen)' })
  status!: string;
  @Field(() => Date, { nullable: true }) closedAt!: Date | null;
  @Field(() => BillingPeriod) period!: BillingPeriod;
  @Field(() => String) currency!: string;
  @Field(() => String, { description: 'The rates in force for the month: now if open, at its close if closed' })
  rateVersion!: string;
  @Field(() => String, { description: "The sum of the team's charges in the month, exactly" }) totalUsd!: string;
  @Field(() => [MeterUsage], { description: 'Every meter of the rates (0 when unused), then other rate versions' })
  meters!: MeterUsage[];
  @Field(() => [KeyUsage], { description: 'Keys not revoked, and every key charged in the month' })
  keys!: KeyUsage[];
}
