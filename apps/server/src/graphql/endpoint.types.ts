import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { DeliveryMode, EndpointOrdering, OrderingOnFailure, SignatureScheme } from './enums.js';

@ObjectType()
export class EndpointHealth {
  @Field(() => String, { description: 'closed, half_open or open' }) circuit!: string;
  @Field(() => Int) consecutiveFailures!: number;
  @Field(() => Date, { nullable: true }) lastSuccessAt!: Date | null;
  @Field(() => Date, { nullable: true }) lastFailureAt!: Date | null;
  @Field(() => Date, { nullable: true }) nextProbeAt!: Date | null;
}

@ObjectType({ description: 'An ed25519 public key that signs deliveries now, and until when' })
export class EndpointPublicKey {
  @Field(() => String, { description: 'whpk_ + standard Base64 of the 32 raw key bytes' }) publicKey!: string;
  @Field(() => Date, {
    nullable: true,
    description: 'When it stops signing (its rotation overlap ends); null: current',
  })
  expiresAt!: Date | null;
}

@ObjectType({
  description: 'A receiver of a tenant. Its signing secret, header values and authorization are never readable.',
})
export class Endpoint {
  @Field(() => ID) id!: string;
  @Field(() => ID) tenantId!: string;
  @Field(() => DeliveryMode, { description: 'Set on create; push by default' })
  deliveryMode!: keyof typeof DeliveryMode;
  @Field(() => String, { description: 'Empty for a stream endpoint, which has no URL' }) url!: string;
  @Field(() => String) name!: string;
  @Field(() => String) description!: string;
  @Field(() => [String]) events!: string[];
  @Field(() => String, { nullable: true, description: 'The filter JSON exactly as written' }) filter!: string | null;
  @Field(() => String, { nullable: true, description: 'The transform JSON exactly as written' }) transform!:
    string | null;
  @Field(() => String) transformVersion!: string;
  @Field(() => String, { description: 'enabled, paused or disabled' }) status!: string;
  @Field(() => String, { nullable: true }) disabledReason!: string | null;
  @Field(() => Int) ratePerSecond!: number;
  @Field(() => Int) maxConcurrency!: number;
  @Field(() => EndpointOrdering) ordering!: keyof typeof EndpointOrdering;
  @Field(() => OrderingOnFailure) orderingOnFailure!: keyof typeof OrderingOnFailure;
  @Field(() => [Int]) retryDelaysSeconds!: number[];
  @Field(() => Int) timeoutSeconds!: number;
  @Field(() => [String], { description: 'Lowercase names of the custom headers (values are write-only)' })
  headers!: string[];
  @Field(() => Boolean) hasAuthorization!: boolean;
  @Field(() => GraphQLJSONObject) metadata!: Record<string, string>;
  @Field(() => Int) secretVersion!: number;
  @Field(() => Date, { nullable: true }) oldSecretExpiresAt!: Date | null;
  @Field(() => SignatureScheme, { description: 'How deliveries are signed (the current secret version)' })
  signatureScheme!: keyof typeof SignatureScheme;
  @Field(() => String, {
    nullable: true,
    description: "An ed25519 endpoint's current public key (whpk_...), what receivers verify with; null for hmac",
  })
  publicKey!: string | null;
  @Field(() => [EndpointPublicKey], {
    description:
      'Every ed25519 public key that signs now: the current one, then the previous one while its rotation overlap ' +
      'lasts (a delivery carries one v1a signature per key); empty when no ed25519 key signs',
  })
  publicKeys!: EndpointPublicKey[];
  @Field(() => EndpointHealth) health!: EndpointHealth;
  @Field(() => Int) queuedCount!: number;
  @Field(() => String) urlRevision!: string;
  @Field(() => String) version!: string;
  @Field(() => String) etag!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class EndpointConnection {
  @Field(() => [Endpoint]) nodes!: Endpoint[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
}

@ObjectType({
  description: 'Returned only by createEndpoint and rotateEndpointSecret: the new secret, shown this once',
})
export class EndpointSecretReveal {
  @Field(() => Endpoint) endpoint!: Endpoint;
  @Field(() => String, {
    nullable: true,
    description:
      'The new secret. An idempotent replay shows it again only to the key that made it while it is still ' +
      'current; otherwise null. Always null for ed25519, whose secret key is never shown (see endpoint.publicKey)',
  })
  signingSecret!: string | null;
}

@ObjectType()
export class TransformError {
  @Field(() => String) field!: string;
  @Field(() => String) message!: string;
}

@ObjectType({ description: 'What an endpoint would do with a payload; nothing is sent or charged' })
export class EndpointPreview {
  @Field(() => ID) endpointId!: string;
  @Field(() => String, { nullable: true }) eventType!: string | null;
  @Field(() => Boolean) matches!: boolean;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => Boolean, { nullable: true }) eventTypeMatched!: boolean | null;
  @Field(() => Boolean) filterMatched!: boolean;
  @Field(() => Boolean) transformApplied!: boolean;
  @Field(() => TransformError, { nullable: true }) transformError!: TransformError | null;
  @Field(() => String) contentType!: string;
  @Field(() => String, { nullable: true, description: 'The exact bytes that would be delivered' }) body!: string | null;
  @Field(() => Int, { nullable: true }) bodyBytes!: number | null;
  @Field(() => Int, { nullable: true }) deliveryUnits!: number | null;
}

@InputType()
export class CreateEndpointInput {
  @Field(() => ID) tenantId!: string;
  @Field(() => String, { nullable: true, description: 'Required for a push endpoint; a stream endpoint has none' })
  url?: string | null;
  @Field(() => DeliveryMode, { nullable: true, description: 'push by default; it cannot be changed later' })
  deliveryMode?: keyof typeof DeliveryMode | null;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => [String], { nullable: true }) events?: string[];
  @Field(() => String, { nullable: true, description: 'Filter JSON text' }) filter?: string | null;
  @Field(() => String, { nullable: true, description: 'Transform JSON text' }) transform?: string | null;
  @Field(() => String, { nullable: true }) status?: string;
  @Field(() => Int, { nullable: true }) ratePerSecond?: number;
  @Field(() => Int, { nullable: true }) maxConcurrency?: number;
  @Field(() => [Int], { nullable: true }) retryDelaysSeconds?: number[];
  @Field(() => Int, { nullable: true }) timeoutSeconds?: number;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Write-only values' }) headers?: Record<
    string,
    unknown
  >;
  @Field(() => String, { nullable: true, description: 'Write-only Authorization value' }) authorization?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
  @Field(() => SignatureScheme, { nullable: true, description: 'hmac by default' })
  signatureScheme?: keyof typeof SignatureScheme;
  @Field(() => EndpointOrdering, { nullable: true, description: 'none by default' })
  ordering?: keyof typeof EndpointOrdering;
  @Field(() => OrderingOnFailure, { nullable: true, description: 'continue by default' })
  orderingOnFailure?: keyof typeof OrderingOnFailure;
}

@InputType({ description: 'Omitted fields keep their values; null clears filter, transform and authorization' })
export class UpdateEndpointInput {
  @Field(() => String, { nullable: true }) url?: string;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => [String], { nullable: true }) events?: string[];
  @Field(() => String, { nullable: true }) filter?: string | null;
  @Field(() => String, { nullable: true }) transform?: string | null;
  @Field(() => String, { nullable: true }) status?: string;
  @Field(() => Int, { nullable: true }) ratePerSecond?: number;
  @Field(() => Int, { nullable: true }) maxConcurrency?: number;
  @Field(() => [Int], { nullable: true }) retryDelaysSeconds?: number[];
  @Field(() => Int, { nullable: true }) timeoutSeconds?: number;
  @Field(() => GraphQLJSONObject, { nullable: true }) headers?: Record<string, unknown>;
  @Field(() => String, { nullable: true }) authorization?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
  @Field(() => EndpointOrdering, { nullable: true }) ordering?: keyof typeof EndpointOrdering;
  @Field(() => OrderingOnFailure, { nullable: true }) orderingOnFailure?: keyof typeof OrderingOnFailure;
}
