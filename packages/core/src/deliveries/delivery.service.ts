import type { DataSource } from 'typeorm';
import type { BillingService } from '../billing/billing.service.js';
import type { Limits } from '../catalog/limits.js';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import type { Page, PageAnswer } from '../common/paging.js';
import { inTransaction, reader } from '../common/transaction.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { readDeliveryTargets, readEarlierGenerations, type DeliveryTarget } from './delivery-context.js';
import {
  readAttemptPagesOfDeliveries,
  readDeliveryPagesOfMessages,
  type DeliveryAttemptsRequest,
  type MessageDeliveriesRequest,
} from './delivery-loaders.js';
import { readAttemptPage, readDeliveryPage, readDeliveryRecord } from './delivery-reads.js';
import { quoteDeliveryReplays, replayDelivery, type ReplayQuote } from './delivery-replay.js';
import { retryDeliveryNow } from './delivery-retry.js';
import type { ListAttemptsQuery, ListDeliveriesQuery, ReplayDeliveryInput } from './delivery.inputs.js';
import { toDeliveryView, type AttemptView, type DeliveryView } from './delivery.view.js';

export interface DeliveryServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  jobs: JobQueue;
  billing: BillingService;
}

/**
 * Deliveries and attempts for support staff: lists (dead letters are the failed and expired ones, delivery-reads.ts),
 * one delivery, its attempts, the pages GraphQL loads in batches (delivery-loaders.ts), retry now (free, uses the
 * remaining attempts: delivery-retry.ts) and replay (a new paid generation, and its price before: delivery-replay.ts).
 */
export class DeliveryService {
  constructor(private readonly deps: DeliveryServiceDeps) {}

  /** GET /deliveries (delivery-reads.ts). */
  async listDeliveries(ctx: CallContext, query: ListDeliveriesQuery): Promise<Page<DeliveryView>> {
    return readDeliveryPage(reader(this.deps.db, ctx), ctx.actor.teamId, query, this.deps.clock.now());
  }

  async getDelivery(ctx: CallContext, id: string): Promise<DeliveryView> {
    const db = reader(this.deps.db, ctx);
    return toDeliveryView(await readDeliveryRecord(db, ctx.actor.teamId, id, this.deps.clock.now()));
  }

  /** GET /deliveries/{id}/attempts (delivery-reads.ts). */
  async listAttempts(ctx: CallContext, deliveryId: string, query: ListAttemptsQuery): Promise<Page<AttemptView>> {
    const db = reader(this.deps.db, ctx);
    return readAttemptPage(db, ctx.actor.teamId, deliveryId, query, this.deps.clock.now());
  }

  /** GraphQL `Message.deliveries` for a page of messages, in one statement (delivery-loaders.ts). */
  async listDeliveriesOfMessages(
    ctx: CallContext,
    requests: readonly MessageDeliveriesRequest[],
  ): Promise<PageAnswer<DeliveryView>[]> {
    const db = reader(this.deps.db, ctx);
    return readDeliveryPagesOfMessages(db, ctx.actor.teamId, requests, this.deps.clock.now());
  }

  /** Where each delivery went (endpoint name, the URL of its attempt's revision), in one statement; null: not found. */
  async deliveryTargets(ctx: CallContext, deliveryIds: readonly string[]): Promise<(DeliveryTarget | null)[]> {
    return readDeliveryTargets(reader(this.deps.db, ctx), ctx.actor.teamId, deliveryIds);
  }

  /** Each delivery's earlier generations (same message and endpoint), newest first, in one statement. */
  async earlierGenerations(ctx: CallContext, deliveryIds: readonly string[]): Promise<DeliveryView[][]> {
    return readEarlierGenerations(reader(this.deps.db, ctx), ctx.actor.teamId, this.deps.clock.now(), deliveryIds);
  }

  /** GraphQL `Delivery.attempts` for a page of deliveries, in one statement (delivery-loaders.ts). */
  async listAttemptsOfDeliveries(
    ctx: CallContext,
    requests: readonly DeliveryAttemptsRequest[],
  ): Promise<PageAnswer<AttemptView>[]> {
    const db = reader(this.deps.db, ctx);
    return readAttemptPagesOfDeliveries(db, ctx.actor.teamId, requests, this.deps.clock.now());
  }

  /** POST /deliveries/{id}/retry_now (delivery-retry.ts). */
  async retryNow(ctx: CallContext, id: string): Promise<DeliveryView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const now = this.deps.clock.now();
      await retryDeliveryNow(tx, ctx.actor.teamId, id, now);
      return toDeliveryView(await readDeliveryRecord(tx, ctx.actor.teamId, id, this.deps.clock.now()));
    });
  }

  /** POST /deliveries/{id}/replay (delivery-replay.ts). */
  async replay(ctx: CallContext, id: string, input: ReplayDeliveryInput): Promise<DeliveryView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const deliveryId = await replayDelivery(tx, this.deps, ctx.actor, id, input, this.deps.clock.now());
      return toDeliveryView(await readDeliveryRecord(tx, ctx.actor.teamId, deliveryId, this.deps.clock.now()));
    });
  }

  /** The price of replaying deliveries, before anything is charged (delivery-replay.ts). */
  async quoteReplays(ctx: CallContext, ids: readonly string[], input: ReplayDeliveryInput): Promise<ReplayQuote> {
    const db = reader(this.deps.db, ctx);
    return quoteDeliveryReplays(db, ctx.actor.teamId, ids, input, this.deps.clock.now());
  }
}
