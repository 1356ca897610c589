import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({
  description:
    "A public receive URL that verifies and captures another provider's webhooks. Its secret and receive URL are " +
    'never readable: they are shown once, by createSource, rotateSourceSecret and rotateSourceToken.',
})
export class Source {
  @Field(() => ID) id!: string;
  @Field(() => ID) tenantId!: string;
  @Field(() => String) name!: string;
  @Field(() => GraphQLJSONObject, {
    description: 'The verifier kind and its settings, flat and named as in the REST API; never the secret',
  })
  verification!: Record<string, unknown>;
  @Field(() => String, { description: 'The verifier kind (one of verifierKinds)' }) kind!: string;
  @Field(() => String, { nullable: true, description: 'The event type of every capture, or null with eventTypePath' })
  eventType!: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'A JSON Pointer into the captured body (or a form field) naming the event type',
  })
  eventTypePath!: string | null;
  @Field(() => String, { nullable: true, description: 'Put before the value at eventTypePath' })
  eventTypePrefix!: string | null;
  @Field(() => ID, { description: 'The secret key captures are charged to' }) billingKeyId!: string;
  @Field(() => String, {
    description: 'active or paused; a paused source answers 503 with Retry-After, so providers send again later',
  })
  status!: string;
  @Field(() => Date, { nullable: true, description: 'While a rotated-out secret still verifies: when that ends' })
  secretRotationEndsAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'While a rotated-out receive URL still answers: when that ends' })
  tokenRotationEndsAt!: Date | null;
  @Field(() => Int) secretVersion!: number;
  @Field(() => Int) tokenVersion!: number;
  @Field(() => GraphQLJSONObject) metadata!: Record<string, string>;
  @Field(() => String) version!: string;
  @Field(() => String, { description: 'Pass back to mutations as the If-Match precondition' }) etag!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class SourceConnection {
  @Field(() => [Source]) nodes!: Source[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({
  description:
    'Returned only by createSource, rotateSourceSecret and rotateSourceToken: what is shown this once. An ' +
    'idempotent replay shows it again only to the key that made it while it is still current; otherwise null.',
})
export class SourceWithSecrets {
  @Field(() => Source) source!: Source;
  @Field(() => String, {
    nullable: true,
    description: 'The URL to give the provider: on createSource and rotateSourceToken',
  })
  receiveUrl!: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'A generated secret (kinds whose generatesSecret is true): on createSource and rotateSourceSecret',
  })
  secret!: string | null;
}

@ObjectType({ description: 'A verifier kind and the settings a source of that kind takes' })
export class VerifierKindInfo {
  @Field(() => String) kind!: string;
  @Field(() => Boolean, {
    description:
      'true: the service makes the secret when none is given and shows it once; false: verification.secret must ' +
      'be the one the provider issued',
  })
  generatesSecret!: boolean;
  @Field(() => GraphQLJSONObject, {
    description:
      'A JSON Schema (draft 2020-12) of the settings as input: their names, types, defaults and which are required',
  })
  settings!: Record<string, unknown>;
}

@InputType()
export class CreateSourceInput {
  @Field(() => ID) tenantId!: string;
  @Field(() => String) name!: string;
  @Field(() => GraphQLJSONObject, {
    description:
      '{kind, secret?, ...settings}: settings flat beside the kind, named as verifierKinds describes them, and ' +
      "the provider's secret (write-only); leave it out for a kind whose generatesSecret is true to have one made",
  })
  verification!: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'Exactly one of eventType and eventTypePath' })
  eventType?: string | null;
  @Field(() => String, { nullable: true }) eventTypePath?: string | null;
  @Field(() => String, { nullable: true, description: 'Only with eventTypePath' }) eventTypePrefix?: string | null;
  @Field(() => ID, { nullable: true, description: 'Default: the key making the request' }) billingKeyId?: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
}

@InputType({
  description:
    'Omitted fields keep their values. Setting eventType clears eventTypePath and eventTypePrefix; setting ' +
    'eventTypePath clears eventType.',
})
export class UpdateSourceInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "Every setting of the source's kind (left out: its default); not the kind, not the secret",
  })
  verification?: Record<string, unknown>;
  @Field(() => String, { nullable: true }) eventType?: string | null;
  @Field(() => String, { nullable: true }) eventTypePath?: string | null;
  @Field(() => String, { nullable: true }) eventTypePrefix?: string | null;
  @Field(() => ID, { nullable: true }) billingKeyId?: string;
  @Field(() => String, { nullable: true, description: 'active or paused' }) status?: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
}
