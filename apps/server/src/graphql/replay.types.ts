import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: "A replay's progress; succeeded, failed and pending are live counts of its generations" })
export class ReplayCounts {
  @Field(() => Int, { description: 'Dead letters in the window when the replay started' }) matched!: number;
  @Field(() => Int, { description: 'New delivery generations created so far' }) created!: number;
  @Field(() => Int, { description: 'Dead letters whose content is redacted or past retention' }) skipped!: number;
  @Field(() => Int) succeeded!: number;
  @Field(() => Int, { description: 'Generations that failed, expired or were canceled' }) failed!: number;
  @Field(() => Int) pending!: number;
}

@ObjectType({ description: 'What replaying every matched dead letter costs' })
export class ReplayCostEstimate {
  @Field(() => Int, { description: 'Dead letters whose content can still be sent' }) deliveries!: number;
  @Field(() => Int, { description: 'Dead letters whose content is redacted or past retention' }) skipped!: number;
  @Field(() => String, { description: 'Exact decimal USD' }) costUsd!: string;
}

@ObjectType({ description: 'How far maxCostUsd reaches, oldest dead letter first (all of them without a bound)' })
export class ReplayWithinMaxCost {
  @Field(() => Int) deliveries!: number;
  @Field(() => String, { description: 'Exact decimal USD' }) costUsd!: string;
}

@ObjectType({ description: "A bulk replay of one endpoint's failed and expired deliveries" })
export class Replay {
  @Field(() => ID) id!: string;
  @Field(() => ID) endpointId!: string;
  @Field(() => ID) tenantId!: string;
  @Field(() => Date, { description: 'The window of dead letters replayed (inclusive)' }) createdAfter!: Date;
  @Field(() => Date, { description: '(exclusive)' }) createdBefore!: Date;
  @Field(() => String, { nullable: true }) eventType!: string | null;
  @Field(() => String, { nullable: true, description: 'Exact decimal USD' }) maxCostUsd!: string | null;
  @Field(() => ID, { description: 'The key that started the replay and pays for it' }) payingKeyId!: string;
  @Field(() => String, {
    description:
      'running (creating generations), delivering (all created, waiting for their outcomes), completed, failed ' +
      'or canceled',
  })
  status!: string;
  @Field(() => String, {
    nullable: true,
    description:
      'Why creation stopped early or the replay failed: max_cost_reached, spending_limit, billing_required, ' +
      'endpoint_deleted, endpoint_disabled, canceled, job_failed (the worker gave up on it after its retries)',
  })
  reason!: string | null;
  @Field(() => ReplayCounts) counts!: ReplayCounts;
  @Field(() => String, { description: 'Charged so far; exact decimal USD' }) costUsd!: string;
  @Field(() => ReplayCostEstimate, { description: 'The estimate when the replay started' })
  estimate!: ReplayCostEstimate;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
}

@ObjectType()
export class ReplayConnection {
  @Field(() => [Replay]) nodes!: Replay[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'What a replay would match and cost now; nothing is stored or charged' })
export class ReplayEstimate {
  @Field(() => ID) endpointId!: string;
  @Field(() => Date) createdAfter!: Date;
  @Field(() => Date) createdBefore!: Date;
  @Field(() => String, { nullable: true }) eventType!: string | null;
  @Field(() => String, { nullable: true, description: 'Exact decimal USD' }) maxCostUsd!: string | null;
  @Field(() => Int, { description: 'Dead letters in the window' }) matched!: number;
  @Field(() => ReplayCostEstimate) estimate!: ReplayCostEstimate;
  @Field(() => ReplayWithinMaxCost) withinMaxCost!: ReplayWithinMaxCost;
}

@InputType({
  description:
    "An endpoint's failed and expired deliveries created in a window of at most 30 days (default the last 30), " +
    'optionally of one event type, bounded by maxCostUsd',
})
export class StartReplayInput {
  @Field(() => ID) endpointId!: string;
  @Field(() => Date, { nullable: true, description: 'Inclusive' }) createdAfter?: Date | null;
  @Field(() => Date, { nullable: true, description: 'Exclusive; default now' }) createdBefore?: Date | null;
  @Field(() => String, { nullable: true }) eventType?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'Creation stops before the cost would pass this; exact decimal USD, e.g. "1.50"',
  })
  maxCostUsd?: string | null;
}
