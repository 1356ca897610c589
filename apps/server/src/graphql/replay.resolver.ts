import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import {
  CreateReplayInput,
  EmptyInput,
  ListReplaysQuery,
  parseInput,
  type ReplayEstimateView,
  type ReplayView,
} from '@svc/core';
import { callContext, type GraphqlContext } from './context.js';
import { IDEMPOTENCY_KEY_ARG, IDEMPOTENCY_KEY_OPTIONS, runIdempotent } from './idempotent.js';
import { defined } from './mappers.js';
import { Replay, ReplayConnection, ReplayEstimate, StartReplayInput } from './replay.types.js';

export function toReplay(view: ReplayView): Replay {
  return {
    id: view.id,
    endpointId: view.endpoint_id,
    tenantId: view.tenant_id,
    createdAfter: new Date(view.created_after),
    createdBefore: new Date(view.created_before),
    eventType: view.event_type,
    maxCostUsd: view.max_cost_usd,
    payingKeyId: view.paying_key_id,
    status: view.status,
    reason: view.reason,
    counts: { ...view.counts },
    costUsd: view.cost_usd,
    estimate: {
      deliveries: view.estimate.deliveries,
      skipped: view.estimate.skipped,
      costUsd: view.estimate.cost_usd,
    },
    createdAt: new Date(view.created_at),
    updatedAt: new Date(view.updated_at),
    finishedAt: view.finished_at === null ? null : new Date(view.finished_at),
  };
}

function toReplayEstimate(view: ReplayEstimateView): ReplayEstimate {
  return {
    endpointId: view.endpoint_id,
    createdAfter: new Date(view.created_after),
    createdBefore: new Date(view.created_before),
    eventType: view.event_type,
    maxCostUsd: view.max_cost_usd,
    matched: view.matched,
    estimate: {
      deliveries: view.estimate.deliveries,
      skipped: view.estimate.skipped,
      costUsd: view.estimate.cost_usd,
    },
    withinMaxCost: { deliveries: view.within_max_cost.deliveries, costUsd: view.within_max_cost.cost_usd },
  };
}

/** GraphQL arguments to the POST /replays body the service validates. */
function replayFields(input: StartReplayInput, dryRun: boolean): Record<string, unknown> {
  return defined({
    endpoint_id: input.endpointId,
    created_after: input.createdAfter?.toISOString(),
    created_before: input.createdBefore?.toISOString(),
    event_type: input.eventType ?? undefined,
    max_cost_usd: input.maxCostUsd ?? undefined,
    dry_run: dryRun,
  });
}

/** createReplay answers the estimate exactly when dry_run is set; anything else is a bug in the service. */
function isEstimate(result: ReplayView | ReplayEstimateView): result is ReplayEstimateView {
  return 'dry_run' in result;
}

/** Lists replays for the replays query (Endpoint.replays loads its pages in batches). */
export async function listReplays(
  context: GraphqlContext,
  args: { endpointId?: string | null; first?: number | null; after?: string | null },
): Promise<ReplayConnection> {
  const page = await context.services.replays.listReplays(
    callContext(context),
    parseInput(
      ListReplaysQuery,
      defined({
        endpoint_id: args.endpointId ?? undefined,
        limit: args.first ?? undefined,
        cursor: args.after ?? undefined,
      }),
    ),
  );
  return { nodes: page.data.map(toReplay), nextCursor: page.nextCursor };
}

@Resolver(() => Replay)
export class ReplayResolver {
  @Authorized()
  @Query(() => ReplayConnection, { description: 'Bulk replays, oldest first' })
  async replays(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID, { nullable: true }) endpointId?: string,
    @Arg('first', () => Int, { nullable: true }) first?: number,
    @Arg('after', () => String, { nullable: true }) after?: string,
  ): Promise<ReplayConnection> {
    return listReplays(context, { endpointId, first, after });
  }

  @Authorized()
  @Query(() => Replay, { description: 'A replay with its progress' })
  async replay(@Ctx() context: GraphqlContext, @Arg('id', () => ID) id: string): Promise<Replay> {
    return toReplay(await context.services.replays.getReplay(callContext(context), id));
  }

  @Authorized()
  @Query(() => ReplayEstimate, {
    description:
      'What startReplay with these arguments would match and cost now (POST /replays with dry_run); nothing is ' +
      'stored or charged. invalid_state for a deleted or disabled endpoint.',
  })
  async replayEstimate(
    @Ctx() context: GraphqlContext,
    @Arg('endpointId', () => ID) endpointId: string,
    @Arg('createdAfter', () => Date, { nullable: true, description: 'Inclusive' }) createdAfter?: Date,
    @Arg('createdBefore', () => Date, { nullable: true, description: 'Exclusive; default now' }) createdBefore?: Date,
    @Arg('eventType', () => String, { nullable: true }) eventType?: string,
    @Arg('maxCostUsd', () => String, { nullable: true, description: 'Exact decimal USD' }) maxCostUsd?: string,
  ): Promise<ReplayEstimate> {
    const parsed = parseInput(
      CreateReplayInput,
      replayFields({ endpointId, createdAfter, createdBefore, eventType, maxCostUsd }, true),
    );
    const result = await context.services.replays.createReplay(callContext(context), parsed);
    if (!isEstimate(result)) throw new Error('a dry run answered a replay');
    return toReplayEstimate(result);
  }

  @Authorized()
  @Mutation(() => Replay, {
    description:
      "Replays an endpoint's dead letters of a window as new paid generations, created in batches by the worker " +
      'and charged to the calling key. invalid_state for a deleted or disabled endpoint; quota_exceeded past the ' +
      "team's active replays; billing_required without a payment card.",
  })
  async startReplay(
    @Ctx() context: GraphqlContext,
    @Arg('input', () => StartReplayInput) input: StartReplayInput,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Replay> {
    const parsed = parseInput(CreateReplayInput, replayFields(input, false));
    return runIdempotent(context, idempotencyKey, {
      operation: 'startReplay',
      input: parsed,
      async run(ctx) {
        const result = await context.services.replays.createReplay(ctx, parsed);
        if (isEstimate(result)) throw new Error('a replay answered a dry run');
        return toReplay(result);
      },
    });
  }

  @Authorized()
  @Mutation(() => Replay, {
    description:
      'A running replay creates no more generations (those created run); canceling a canceled replay changes ' +
      'nothing; any other gives invalid_state',
  })
  async cancelReplay(
    @Ctx() context: GraphqlContext,
    @Arg('id', () => ID) id: string,
    @Arg(IDEMPOTENCY_KEY_ARG, () => String, IDEMPOTENCY_KEY_OPTIONS) idempotencyKey?: string | null,
  ): Promise<Replay> {
    const parsed = parseInput(EmptyInput, {});
    return runIdempotent(context, idempotencyKey, {
      operation: 'cancelReplay',
      params: { id },
      input: parsed,
      run: async (ctx) => toReplay(await context.services.replays.cancelReplay(ctx, id)),
    });
  }
}
