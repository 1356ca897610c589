import { Arg, Authorized, Ctx, FieldResolver, Float, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import {
  EmptyInput,
  ListDeliveriesQuery,
  parseInput,
  ReplayDeliveryInput,
  type AttemptView,
  type DeliveryView,
  type ReplayQuote as ReplayQuoteView,
} from '@svc/core';
import { DeliveryKind, DeliveryStatus, ListOrder, ReplayConfiguration } from './enums.js';
import { callContext, loadersOf, type GraphqlContext } from './context.js';
import {
  Attempt,
  AttemptConnection,
  AttemptErrorDetail,
  Delivery,
  DeliveryConnection,
  DeliveryTarget,
  EarlierGeneration,
  ReplayQuote,
} from './delivery.types.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined } from './mappers.js';

function dateOrNull(iso: string | null): Date | null {
  return iso === null ? null : new Date(iso);
}

export function toDelivery(view: DeliveryView): Delivery {
  return {
    id: view.id,
    messageId: view.message_id,
    endpointId: view.endpoint_id,
    tenantId: view.tenant_id,
    eventType: view.event_type,
    generation: view.generation,
    kind: view.kind,
    replayOf: view.replay_of,
    replayId: view.replay_id,
    status: view.status,
    attemptCount: view.attempt_count,
    nextAttemptAt: dateOrNull(view.next_attempt_at),
    lastStatusCode: view.last_status_code,
    lastError: view.last_error,
    lastAttemptAt: dateOrNull(view.last_attempt_at),
    expiresAt: new Date(view.expires_at),
    bodyBytes: view.body_bytes,
    contentType: view.content_type,
    transformed: view.transformed,
    price: { deliveryUnits: view.price.delivery_units, totalUsd: view.price.total_usd },
    createdAt: new Date(view.created_at),
    updatedAt: new Date(view.updated_at),
    finishedAt: dateOrNull(view.finished_at),
    repairedBy: view.repaired_by,
    sequence: view.sequence ?? null,
  };
}

function toAttemptErrorDetail(detail: AttemptView['error_detail']): AttemptErrorDetail | null {
  if (detail === undefined) return null;
  const { timings_ms: t } = detail;
  return {
    phase: detail.phase,
    cause: detail.cause,
    code: detail.code,
    address: detail.address,
    port: detail.port,
    connectionReused: detail.connection_reused,
    timingsMs: { dns: t.dns, connect: t.connect, tls: t.tls, firstByte: t.first_byte, total: t.total },
  };
}

function toAttempt(view: AttemptView): Attempt {
  return {
    id: view.id,
    deliveryId: view.delivery_id,
    endpointId: view.endpoint_id,
    number: view.number,
    trigger: view.trigger,
    startedAt: new Date(view.started_at),
    durationMs: view.duration_ms,
    urlRevision: view.url_revision,
    statusCode: view.status_code,
    errorKind: view.error_kind,
    errorDetail: toAttemptErrorDetail(view.error_detail),
    outcome: view.outcome,
    responseBody: view.response_body,
    responseBodyEncoding: view.response_body_encoding,
    createdAt: new Date(view.created_at),
  };
}

function toReplayQuote(quote: ReplayQuoteView): ReplayQuote {
  return {
    items: quote.items.map((item) => ({
      deliveryId: item.delivery_id,
      replayable: item.replayable,
      errorCode: item.error_code,
      reason: item.reason,
      deliveryUnits: item.delivery_units,
      totalUsd: item.total_usd,
      repairedBy: item.repaired_by,
    })),
    deliveryUnits: quote.delivery_units,
    totalUsd: quote.total_usd,
    repairedCount: quote.repaired_count,
    unrepairedDeliveryUnits: quote.unrepaired_delivery_units,
    unrepairedTotalUsd: quote.unrepaired_total_usd,
  };
}

const CONFIGURATION_OPTIONS = {
  nullable: true,
  description:
    "frozen (default): the bytes the delivery was sent with; current: the endpoint's current transform applied " +
    'to the original content',
} as const;

@Resolver(() => Delivery)
export class DeliveryResolver {
  @Authorized()
  @Query(() => DeliveryConnection, {
    description:
      'Deliveries created in a window of at most 30 days (default the last 30), oldest first (newest first with order)',
  })
  async deliveries(
    @Ctx() context: GraphqlContext,
    @Arg('createdAfter', () => Date, { nullable: true, description: 'Inclusive' }) createdAfter?: Date,
    @Arg('createdBefore', () => Date, { nullable: true, description: 'Exclusive; default now' }) createdBefore?: Date,
    @Arg('status', () => DeliveryStatus, { nullable: true, description: 'failed or expired lists the dead letters' })
    status?: string,
    @Arg('messageId', () => ID, { nullable: true }) messageId?: string,
    @Arg('endpointId', () => ID, { nullable: true }) endpointId?: string,
    @Arg('tenantId', () => ID, { nullable: true }) tenantId?: string,
    @Arg('eventType', () => String, { nullable: true }) eventType?: string,
    @Arg('kind', () => DeliveryKind, { nullable: true, description: 'original or replay' }) kind?: string,
    @Arg('repaired', () => Boolean, {
      nullable: true,
      description: 'true: only dead letters a later generation repaired (repairedBy set); false: all but those',
    })
    repaired?: boolean | null,
    @Arg('sequence', () => Float, {
      nullable: true,
      description: "An ordered endpoint's Svc-Sequence number (a whole number); needs endpointId",
    })
    sequence?: number | null,
    @Arg('latestGeneration', () => Boolean, {
      nullable: true,
      description:
        'true: a dead letter with a later dead-letter generation of its message to its endpoint is left out, so a ' +
        'failure and its failed replays are one row (earlierGenerations has the rest); needs status failed or expired',
    })
    latestGeneration?: boolean | null,
    @Arg('order', () => ListOrder, { nullable: true, description: 'oldest (default) or newest first' }) order?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<DeliveryConnection> {
    const page = await context.services.deliveries.listDeliveries(
      callContext(context),
      parseInput(
        ListDeliveriesQuery,
        defined({
          created_after: createdAfter?.toISOString(),
          created_before: createdBefore?.toISOString(),
          status: status ?? undefined,
          message_id: messageId ?? undefined,
          endpoint_id: endpointId ?? undefined,
          tenant_id: tenantId ?? undefined,
          event_type: eventType ?? undefined,
          kind: kind ?? undefined,
          repaired: repaired === undefined || repaired === null ? undefined : String(repaired),
          sequence: sequence === undefined || sequence === null ? undefined : String(sequence),
          latest_generation:
            latestGeneration === undefined || latestGeneration === null ? undefined : String(latestGeneration),
          order: order ?? undefined,
          limit: first ?? undefined,
          cursor: after ?? undefined,
        }),
      ),
    );
    return { nodes: page.data.map(toDelivery), nextCursor: page.nextCursor };
  }

  @Authorized()
  @Query(() => Delivery)
  async delivery(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Delivery> {
    return toDelivery(await context.services.deliveries.getDelivery(callContext(context), id));
  }

  @Authorized()
  @Query(() => ReplayQuote, {
    description: 'Whether each delivery can be replayed and what it would cost (at most 200); nothing is charged',
  })
  async replayQuote(
    @Ctx() context: GraphqlContext,
    @Arg('deliveryIds', () => [ID]) deliveryIds: string[],
    @Arg('configuration', () => ReplayConfiguration, CONFIGURATION_OPTIONS) configuration?: string,
  ): Promise<ReplayQuote> {
    const parsed = parseInput(ReplayDeliveryInput, defined({ configuration: configuration ?? undefined }));
    return toReplayQuote(await context.services.deliveries.quoteReplays(callContext(context), deliveryIds, parsed));
  }

  @FieldResolver(() => AttemptConnection, { description: 'The attempts, oldest first' })
  async attempts(
    @Ctx() context: GraphqlContext,
    @Root() delivery: Delivery,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<AttemptConnection> {
    const page = await loadersOf(context).deliveryAttempts.load({
      deliveryId: delivery.id,
      limit: first ?? undefined,
      cursor: after ?? undefined,
    });
    return { nodes: page.data.map(toAttempt), nextCursor: page.nextCursor };
  }

  @FieldResolver(() => DeliveryTarget, {
    description: "Where it went: the endpoint's name and the URL of the revision its last attempt used",
  })
  async target(@Ctx() context: GraphqlContext, @Root() delivery: Delivery): Promise<DeliveryTarget> {
    const target = await loadersOf(context).deliveryTargets.load(delivery.id);
    // The delivery was just read for this request; only a deletion in between (there is none) could lose it.
    if (!target) throw new Error(`delivery ${delivery.id} has no endpoint`);
    return target;
  }

  @FieldResolver(() => [EarlierGeneration], {
    description:
      'The earlier generations of its message to its endpoint (the original, earlier replays), newest first: the ' +
      'newest 10',
  })
  async earlierGenerations(@Ctx() context: GraphqlContext, @Root() delivery: Delivery): Promise<EarlierGeneration[]> {
    return (await loadersOf(context).earlierGenerations.load(delivery.id)).map((view) => ({
      id: view.id,
      generation: view.generation,
      kind: view.kind,
      status: view.status,
      lastStatusCode: view.last_status_code,
      lastError: view.last_error,
      createdAt: new Date(view.created_at),
      finishedAt: dateOrNull(view.finished_at),
    }));
  }

  @Authorized()
  @Mutation(() => Delivery, {
    description:
      'A delivery waiting for a retry (or queued behind an open circuit) is attempted now, free, keeping its ' +
      'attempts; anything else gives invalid_state',
  })
  async retryDeliveryNow(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Delivery> {
    const parsed = parseInput(EmptyInput, {});
    return runIdempotent(context, idempotencyKey, {
      operation: 'retryDeliveryNow',
      params: { id },
      input: parsed,
      run: async (ctx) => toDelivery(await context.services.deliveries.retryNow(ctx, id)),
    });
  }

  @Authorized()
  @Mutation(() => Delivery, {
    description:
      'Replays a succeeded, failed or expired delivery as a new generation (same webhook-id), charged as a ' +
      'delivery. payload_expired after redaction or retention; invalid_state for pending or canceled deliveries ' +
      'and deleted or disabled endpoints.',
  })
  async replayDelivery(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg('configuration', () => ReplayConfiguration, CONFIGURATION_OPTIONS) configuration?: string | null,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Delivery> {
    const parsed = parseInput(ReplayDeliveryInput, defined({ configuration: configuration ?? undefined }));
    return runIdempotent(context, idempotencyKey, {
      operation: 'replayDelivery',
      params: { id },
      input: parsed,
      run: async (ctx) => toDelivery(await context.services.deliveries.replay(ctx, id, parsed)),
    });
  }
}
