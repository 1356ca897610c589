import { Field, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: 'Something that happened to a resource; a burst of one kind folds into one event' })
export class OperationalEvent {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: 'webhooks.delivery.failed, webhooks.endpoint.disabled, ...' }) type!: string;
  @Field(() => Date, { description: 'The first occurrence' }) createdAt!: Date;
  @Field(() => String, { description: 'The resource of the first occurrence' }) resourceId!: string;
  @Field(() => ID) tenantId!: string;
  @Field(() => String) resourceVersion!: string;
  @Field(() => GraphQLJSONObject, { description: "The first occurrence's data" }) data!: Record<string, unknown>;
  @Field(() => Boolean) coalesced!: boolean;
  @Field(() => Int) count!: number;
  @Field(() => String, { description: 'Resource ID of the first occurrence folded into the event' }) firstId!: string;
  @Field(() => String, { description: 'Resource ID of the last occurrence folded into the event' }) lastId!: string;
}

@ObjectType({ description: 'A feed in commit order: nextCursor is set on every non-empty page' })
export class OperationalEventConnection {
  @Field(() => [OperationalEvent]) nodes!: OperationalEvent[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}
