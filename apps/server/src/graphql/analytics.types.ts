import { Field, Float, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One hour or day of one scope' })
export class AnalyticsRow {
  @Field(() => Date, { description: 'Start of the UTC hour or day; the bucket covers all of it, even past the window' })
  start!: Date;
  @Field(() => Int, { description: 'Messages accepted (API, endpoint tests, source captures)' })
  admittedMessages!: number;
  @Field(() => Float, { description: 'Bytes of the accepted message bodies, an integer (past the 32-bit Int)' })
  ingestBytes!: number;
  @Field(() => Int, { description: 'Delivery generations created: originals at acceptance, replays when created' })
  deliveries!: number;
  @Field(() => Int, { description: 'HTTP requests made to receivers, by when they started' }) attempts!: number;
  @Field(() => Int, { description: 'Deliveries that finished succeeded' }) succeeded!: number;
  @Field(() => Int, { description: 'Deliveries that finished failed (dead letters)' }) failed!: number;
  @Field(() => Int, { description: 'Deliveries that finished expired (dead letters)' }) expired!: number;
  @Field(() => Int, { description: 'Deliveries that finished canceled' }) canceled!: number;
  @Field(() => Int, { description: 'Source captures answered as duplicates of an earlier one' }) duplicates!: number;
  @Field(() => Int, { description: 'Source captures refused because they did not verify' }) rejectedAuth!: number;
  @Field(() => Int, { description: 'Admissions and captures refused with 429 rate_limited' }) throttled!: number;
  @Field(() => Int, {
    description: 'Pending deliveries (queued, in flight, retry wait) at the last sample of the bucket',
  })
  queueDepth!: number;
  @Field(() => Int, {
    description: 'At the last sample of the bucket: how long the oldest due delivery had been waiting (0 when none)',
  })
  oldestDueAgeSeconds!: number;
}

@ObjectType({
  description: 'Counts by transition time, eventually consistent within about a minute; never a billing record',
})
export class Analytics {
  @Field(() => String, { description: 'hour or day' }) bucket!: string;
  @Field(() => Date) createdAfter!: Date;
  @Field(() => Date) createdBefore!: Date;
  @Field(() => [AnalyticsRow], {
    description: 'Every bucket overlapping the window, oldest first, with zeros where nothing happened',
  })
  rows!: AnalyticsRow[];
  @Field(() => Int, { description: 'Pending deliveries of the scope now (the latest sample, at most about 20 s old)' })
  queueDepth!: number;
  @Field(() => Int, {
    description: 'How long the oldest due delivery of the scope has been waiting (the latest sample; 0 when none)',
  })
  oldestDueAgeSeconds!: number;
}
