import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { CreateMessageInput, EndpointTestInput, parseInput, sendEndpointTest, type MessageView } from '@svc/core';
import { callContext, type GraphqlContext } from './context.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined, rawJsonArgument } from './mappers.js';
import { Message, PublishMessageInput } from './message.types.js';

function toMessage(view: MessageView): Message {
  const counts = view.delivery_counts;
  return {
    id: view.id,
    tenantId: view.tenant_id,
    eventType: view.event_type,
    externalId: view.external_id,
    origin: view.origin,
    sourceId: view.source_id,
    status: view.status,
    bodyBytes: view.body_bytes,
    bodySha256: view.body_sha256,
    contentType: view.content_type,
    deliverAt: new Date(view.deliver_at),
    expiresAt: new Date(view.expires_at),
    retainedUntil: new Date(view.retained_until),
    contentAvailable: view.content_available,
    deliveryCounts: {
      scheduled: counts.scheduled,
      queued: counts.queued,
      inFlight: counts.in_flight,
      retryWait: counts.retry_wait,
      succeeded: counts.succeeded,
      failed: counts.failed,
      expired: counts.expired,
      canceled: counts.canceled,
    },
    price: {
      ingestUnits: view.price.ingest_units,
      deliveryUnits: view.price.delivery_units,
      totalUsd: view.price.total_usd,
      rateVersion: view.price.rate_version,
    },
    redacted: view.redacted,
    redactionStatus: view.redaction_status,
    redactedAt: view.redacted_at === null ? null : new Date(view.redacted_at),
    metadata: view.metadata,
    createdAt: new Date(view.created_at),
  };
}

@Resolver(() => Message)
export class MessageResolver {
  @Authorized()
  @Query(() => Message)
  async message(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Message> {
    return toMessage(await context.services.messages.getMessage(callContext(context), id));
  }

  @Authorized()
  @Mutation(() => Message, {
    description: 'Publishes a message: answered once the message, its deliveries and its charge are stored',
  })
  async publishMessage(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => PublishMessageInput) input: PublishMessageInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Message> {
    const parsed = parseInput(
      CreateMessageInput,
      defined({
        tenant_id: input.tenantId,
        event_type: input.eventType,
        payload: rawJsonArgument(input.payload, 'payload'),
        endpoint_ids: input.endpointIds ?? undefined,
        external_id: input.externalId ?? undefined,
        metadata: input.metadata ?? undefined,
      }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'publishMessage',
      input: parsed,
      run: async (ctx) => toMessage(await context.services.messages.admitMessage(ctx, parsed, { origin: 'api' })),
    });
  }

  @Authorized()
  @Mutation(() => Message, {
    description:
      'Sends a test message (event type svc.test) to one enabled endpoint, skipping its event types, filter and ' +
      'transform; charged as ingestion plus delivery. A paused or disabled endpoint gives invalid_state.',
  })
  async sendTestMessage(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('payload', () => String, { nullable: true, description: 'JSON text; default {"test":true}' })
    payload?: string | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Message> {
    const parsed = parseInput(
      EndpointTestInput,
      defined({ payload: rawJsonArgument(payload ?? undefined, 'payload') }),
    );
    return runIdempotent(context, idempotencyKey, {
      operation: 'sendTestMessage',
      params: { id: endpointId },
      input: parsed,
      run: async (ctx) => toMessage(await sendEndpointTest(context.services, ctx, endpointId, parsed)),
    });
  }
}
