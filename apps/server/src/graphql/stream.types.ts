import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: "A stream endpoint's token (docs/streams.md); the token itself is shown only on create" })
export class StreamToken {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When it last opened the stream or acknowledged (to the minute)' })
  lastUsedAt!: Date | null;
}

@ObjectType()
export class StreamTokenConnection {
  @Field(() => [StreamToken]) nodes!: StreamToken[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({ description: 'Returned only by createStreamToken: the new token, shown this once' })
export class StreamTokenReveal {
  @Field(() => StreamToken) streamToken!: StreamToken;
  @Field(() => String, {
    nullable: true,
    description:
      'The token (whst_...) for GET /v1/endpoints/{id}/stream and its acknowledgements. Stored only as a hash: ' +
      'null in an idempotent replay',
  })
  token!: string | null;
}

@ObjectType({ description: "An open connection to a stream endpoint's stream, in any server process" })
export class StreamConnection {
  @Field(() => ID) id!: string;
  @Field(() => ID, { description: 'The stream token it was opened with' }) tokenId!: string;
  @Field(() => Date) openedAt!: Date;
  @Field(() => String, { description: 'The address it came from' }) remoteAddress!: string;
  @Field(() => Int, { description: 'Deliveries offered to it and not yet acknowledged' }) unacknowledged!: number;
}
