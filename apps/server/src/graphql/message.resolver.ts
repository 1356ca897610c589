import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { decodeUtf8Strict, JsonSyntaxError } from '@svc/json';
import {
  CreateMessageInput,
  EmptyInput,
  EndpointTestInput,
  ListMessagesQuery,
  parseInput,
  sendEndpointTest,
  type CallContext,
  type CancelResult,
  type MessageView,
  type RedactResult,
} from '@svc/core';
import { ListOrder, MessageStatus } from './enums.js';
import { callContext, loadersOf, type GraphqlContext } from './context.js';
import { toDelivery } from './delivery.resolver.js';
import { DeliveryConnection } from './delivery.types.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined, rawJsonArgument } from './mappers.js';
import {
  CancelMessageResult,
  Message,
  MessageConnection,
  MessageContent,
  PublishMessageInput,
  RedactMessageResult,
} from './message.types.js';

export function toMessage(view: MessageView): Message {
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
    repairedCount: view.repaired_count,
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

export function toMessageContent(content: { contentType: string; body: Buffer }): MessageContent {
  return {
    contentType: content.contentType,
    bytes: content.body.length,
    bodyBase64: content.body.toString('base64'),
    text: utf8OrNull(content.body),
  };
}

function utf8OrNull(bytes: Buffer): string | null {
  try {
    return decodeUtf8Strict(bytes);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return null;
    throw error;
  }
}

function toCancelMessageResult(result: CancelResult): CancelMessageResult {
  return {
    messageId: result.message_id,
    canceledCount: result.canceled_count,
    inFlightCount: result.in_flight_count,
    alreadyTerminalCount: result.already_terminal_count,
  };
}

function toRedactMessageResult(result: RedactResult): RedactMessageResult {
  return { messageId: result.message_id, status: result.status, redactedAt: new Date(result.redacted_at) };
}

@Resolver(() => Message)
export class MessageResolver {
  @Authorized()
  @Query(() => Message)
  async message(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Message> {
    return toMessage(await context.services.messages.getMessage(callContext(context), id));
  }

  @Authorized()
  @Query(() => MessageConnection, {
    description:
      'Messages created in a window of at most 30 days (default the last 30), oldest first (newest first with order)',
  })
  async messages(
    @Ctx() context: GraphqlContext,
    @Arg('createdAfter', () => Date, { nullable: true, description: 'Inclusive' }) createdAfter?: Date,
    @Arg('createdBefore', () => Date, { nullable: true, description: 'Exclusive; default now' }) createdBefore?: Date,
    @Arg('tenantId', () => ID, { nullable: true }) tenantId?: string,
    @Arg('eventType', () => String, { nullable: true }) eventType?: string,
    @Arg('sourceId', () => ID, { nullable: true }) sourceId?: string,
    @Arg('status', () => MessageStatus, { nullable: true }) status?: string,
    @Arg('externalId', () => String, { nullable: true }) externalId?: string,
    @Arg('order', () => ListOrder, { nullable: true, description: 'oldest (default) or newest first' }) order?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<MessageConnection> {
    const page = await context.services.messages.listMessages(
      callContext(context),
      parseInput(
        ListMessagesQuery,
        defined({
          created_after: createdAfter?.toISOString(),
          created_before: createdBefore?.toISOString(),
          tenant_id: tenantId ?? undefined,
          event_type: eventType ?? undefined,
          source_id: sourceId ?? undefined,
          status: status ?? undefined,
          external_id: externalId ?? undefined,
          order: order ?? undefined,
          limit: first ?? undefined,
          cursor: after ?? undefined,
        }),
      ),
    );
    return { nodes: page.data.map(toMessage), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => MessageContent, { description: 'payload_expired after redaction or the end of retention' })
  async messageContent(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<MessageContent> {
    return toMessageContent(await context.services.messages.getContent(callContext(context), id));
  }

  @FieldResolver(() => DeliveryConnection, {
    description: "This message's deliveries, every generation, oldest first",
  })
  async deliveries(
    @Ctx() context: GraphqlContext,
    @Root() message: Message,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<DeliveryConnection> {
    // A message kept from an idempotent replay has its dates as ISO text. Every delivery of a message is created
    // within 30 days of it (replays only while its content is retained), the window its page is listed in.
    const page = await loadersOf(context).messageDeliveries.load({
      messageId: message.id,
      createdAt: new Date(message.createdAt),
      limit: first ?? undefined,
      cursor: after ?? undefined,
    });
    return { nodes: page.data.map(toDelivery), nextCursor: page.nextCursor };
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
    const { admission } = context.services;
    const request = (ctx: CallContext) => ({ actor: ctx.actor, input: parsed, options: { origin: 'api' as const } });
    return runIdempotent(context, idempotencyKey, {
      operation: 'publishMessage',
      input: parsed,
      run: async (ctx) => toMessage(await admission.admit(request(ctx))),
      // Admission batches the key's lock and record with the work of concurrent requests (docs/admission.md).
      runOnce: (ctx, { key, fingerprint, keep }) =>
        admission.admitOnce(request(ctx), { key, fingerprint, keep: (view) => keep(toMessage(view)) }),
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

  @Authorized()
  @Mutation(() => CancelMessageResult, {
    description:
      'Cancels the original deliveries no attempt holds; in-flight ones finish without retries; replays are ' +
      'untouched; nothing is refunded. Repeating changes nothing.',
  })
  async cancelMessage(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<CancelMessageResult> {
    const parsed = parseInput(EmptyInput, {});
    return runIdempotent(context, idempotencyKey, {
      operation: 'cancelMessage',
      params: { id },
      input: parsed,
      run: async (ctx) => toCancelMessageResult(await context.services.messageRepair.cancelMessage(ctx, id)),
    });
  }

  @Authorized()
  @Mutation(() => RedactMessageResult, {
    description:
      'Erases the content at once and cancels every pending delivery, replays included; metadata and charges ' +
      'stay. Status redacting, then complete after the sweep. Repeating changes nothing.',
  })
  async redactMessage(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<RedactMessageResult> {
    const parsed = parseInput(EmptyInput, {});
    return runIdempotent(context, idempotencyKey, {
      operation: 'redactMessage',
      params: { id },
      input: parsed,
      run: async (ctx) => toRedactMessageResult(await context.services.messageRepair.redactMessage(ctx, id)),
    });
  }
}
