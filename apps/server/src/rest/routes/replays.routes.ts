import { z } from 'zod';
import {
  CreateReplayInput,
  EmptyInput,
  ListReplaysQuery,
  parseInput,
  type ReplayEstimateView,
  type ReplayView,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape, listOf, queryOf, timestamp } from '../shapes.js';

const usd = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .describe('Exact decimal USD');

export const ReplayShape = z
  .strictObject({
    id: z.string().startsWith('wdr_'),
    endpoint_id: z.string().startsWith('wde_'),
    tenant_id: z.string().startsWith('wdt_'),
    created_after: timestamp.describe('The window of dead letters replayed (inclusive)'),
    created_before: timestamp.describe('(exclusive)'),
    event_type: z.string().nullable(),
    max_cost_usd: usd.nullable(),
    paying_key_id: z.string().describe('The key that started the replay and pays for it'),
    status: z
      .enum(['running', 'delivering', 'completed', 'failed', 'canceled'])
      .describe('running: creating generations; delivering: all created, waiting for their outcomes'),
    reason: z
      .string()
      .nullable()
      .describe(
        'Why creation stopped early or the replay failed: max_cost_reached, spending_limit, billing_required, endpoint_deleted, endpoint_disabled, canceled, job_failed (the worker gave up on it after its retries)',
      ),
    counts: z.strictObject({
      matched: z.number().int().describe('Dead letters in the window when the replay started'),
      created: z.number().int().describe('New delivery generations created so far'),
      skipped: z.number().int().describe('Dead letters whose content is redacted or past retention'),
      succeeded: z.number().int(),
      failed: z.number().int().describe('Generations that failed, expired or were canceled'),
      pending: z.number().int(),
    }),
    cost_usd: usd.describe('Charged so far'),
    estimate: z.strictObject({ deliveries: z.number().int(), skipped: z.number().int(), cost_usd: usd }),
    created_at: timestamp,
    updated_at: timestamp,
    finished_at: timestamp.nullable(),
  })
  .meta({ id: 'Replay', description: "A bulk replay of one endpoint's failed and expired deliveries" });

const ReplayEstimateShape = z
  .strictObject({
    dry_run: z.literal(true),
    endpoint_id: z.string().startsWith('wde_'),
    created_after: timestamp,
    created_before: timestamp,
    event_type: z.string().nullable(),
    max_cost_usd: usd.nullable(),
    matched: z.number().int(),
    estimate: z.strictObject({ deliveries: z.number().int(), skipped: z.number().int(), cost_usd: usd }),
    within_max_cost: z.strictObject({ deliveries: z.number().int(), cost_usd: usd }),
  })
  .meta({ id: 'ReplayEstimate', description: 'What a replay would match and cost; nothing is stored or charged' });

export function replayRoutes(services: Services): RouteSpec[] {
  const { replays } = services;
  return [
    defineRoute({
      operationId: 'createReplay',
      summary:
        "Replay an endpoint's failed and expired deliveries of a window as new paid generations, in batches " +
        '(dry_run: the count and price only, without an Idempotency-Key)',
      method: 'POST',
      path: '/replays',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      storesNothing: (body) => body['dry_run'] === true,
      input: CreateReplayInput,
      responses: {
        200: ReplayEstimateShape,
        202: ReplayShape,
        402: ErrorShape,
        409: ErrorShape,
        422: ErrorShape,
      },
      async handler({ ctx, input }) {
        const result: ReplayView | ReplayEstimateView = await replays.createReplay(ctx, input);
        return 'dry_run' in result ? { status: 200, body: result } : { status: 202, body: result };
      },
    }),
    defineRoute({
      operationId: 'listReplays',
      summary: 'List replays, oldest first',
      method: 'GET',
      path: '/replays',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(ListReplaysQuery, { endpoint_id: "Only this endpoint's replays" }),
      responses: { 200: listOf(ReplayShape, 'ReplayList'), 422: ErrorShape },
      async handler({ ctx, query }) {
        const page = await replays.listReplays(ctx, parseInput(ListReplaysQuery, query));
        return { status: 200, body: { data: page.data, next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      operationId: 'getReplay',
      summary: 'Read a replay with its progress',
      method: 'GET',
      path: '/replays/:id',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: ReplayShape, 404: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 200, body: await replays.getReplay(ctx, params['id']!) };
      },
    }),
    defineRoute({
      operationId: 'cancelReplay',
      summary: 'Stop a running replay from creating more generations (those created run)',
      method: 'POST',
      path: '/replays/:id/cancel',
      auth: 'secret_key',
      rateClass: 'config_write',
      idempotent: true,
      input: EmptyInput,
      responses: { 200: ReplayShape, 404: ErrorShape, 409: ErrorShape, 422: ErrorShape },
      async handler({ ctx, params }) {
        return { status: 200, body: await replays.cancelReplay(ctx, params['id']!) };
      },
    }),
  ];
}
