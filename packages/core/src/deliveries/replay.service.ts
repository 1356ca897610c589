import { z } from 'zod';
import type { DataSource, EntityManager } from 'typeorm';
import { billingMonth, unitsFor, type BillingService } from '../billing/billing.service.js';
import { formatUsd, METERS, parseUsd } from '../catalog/catalog.js';
import type { Limits } from '../catalog/limits.js';
import { HOUR, SECOND, type Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { invalidField, isServiceError, notFound, ServiceError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import {
  checkEach,
  decodeCursor,
  parseLimit,
  passed,
  rowsByRequest,
  toPage,
  type ListScope,
  type Page,
  type PageAnswer,
} from '../common/paging.js';
import { inTransaction, lockTeamQueue, lockTeamReplays, reader } from '../common/transaction.js';
import { parseWindow } from '../common/window.js';
import type { OperationalEventService } from '../events/operational-event.service.js';
import { defineJobContract } from '../jobs/job-contract.js';
import { JOB_SCHEMA, type JobQueue } from '../jobs/job-queue.js';
import { laterGenerationsSql } from './repairs.js';
import { insertGenerations, type NewGeneration } from './replay-generations.js';
import type { CreateReplayInput, ListReplaysQuery } from './replay.inputs.js';

/** Creates the next batch of a replay's generations (one transaction per batch). */
export const replayBatchJob = defineJobContract({
  queue: 'replay.batch',
  version: 1,
  payload: z.object({ replay_id: z.string().startsWith('wdr_') }),
  expireInSeconds: 120,
  // A batch that failed (Postgres away, a lock timeout) runs again from its cursor after 5-10 s, 10-20 s, 20-40 s and
  // 40-80 s; one that still fails fails its replay (job_failed) instead of retrying for days.
  retryLimit: 4,
  retryDelaySeconds: 5,
});

/** Looks whether a replay's generations have all finished (then it completes and emits its event). */
export const replayCheckJob = defineJobContract({
  queue: 'replay.check',
  version: 1,
  payload: z.object({ replay_id: z.string().startsWith('wdr_') }),
  expireInSeconds: 60,
  retryLimit: 4,
  retryDelaySeconds: 5,
});

/** Dead letters looked at per batch (each batch is one transaction and one charge). */
export const REPLAY_BATCH_SIZE = 100;
const CHECK_EVERY_MS = 5 * SECOND;
const QUEUE_FULL_WAIT_MS = 5 * SECOND;

const DELIVERY_METER = METERS.find((m) => m.id === 'webhooks.delivery_16k')!;

export type ReplayStatus = 'running' | 'delivering' | 'completed' | 'failed' | 'canceled';

interface ReplayRow {
  id: string;
  team_id: string;
  endpoint_id: string;
  tenant_id: string;
  event_type: string | null;
  window_after: Date;
  window_before: Date;
  max_cost_micros: string | null;
  paying_key_id: string;
  status: ReplayStatus;
  reason: string | null;
  matched: number;
  estimate_deliveries: number;
  estimate_units: string;
  created_count: number;
  skipped: number;
  cost_micros: string;
  cursor_created_at: Date | null;
  cursor_id: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  /** Live counts of the replay's generations by outcome. */
  outcomes?: { succeeded: number; failed: number; pending: number } | null;
}

/** The Replay shape of the API (docs/replays.md). */
export interface ReplayView {
  id: string;
  endpoint_id: string;
  tenant_id: string;
  created_after: string;
  created_before: string;
  event_type: string | null;
  max_cost_usd: string | null;
  paying_key_id: string;
  status: ReplayStatus;
  /** Why creation stopped early or the replay failed: max_cost_reached, spending_limit, billing_required, endpoint_deleted, endpoint_disabled, canceled, job_failed. */
  reason: string | null;
  counts: { matched: number; created: number; skipped: number; succeeded: number; failed: number; pending: number };
  cost_usd: string;
  estimate: { deliveries: number; skipped: number; cost_usd: string };
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** POST /replays with dry_run: what a replay would match and cost now; nothing is stored. */
export interface ReplayEstimateView {
  dry_run: true;
  endpoint_id: string;
  created_after: string;
  created_before: string;
  event_type: string | null;
  max_cost_usd: string | null;
  matched: number;
  estimate: { deliveries: number; skipped: number; cost_usd: string };
  /** What the bound allows: deliveries and cost up to max_cost_usd (all of them without one). */
  within_max_cost: { deliveries: number; cost_usd: string };
}

interface Candidate {
  id: string;
  tenant_id: string;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  generation: number;
  content_type: string;
  body: Buffer | null;
  body_bytes: number;
  created_at: Date;
  available: boolean;
}

export interface ReplayServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  jobs: JobQueue;
  billing: BillingService;
  events: OperationalEventService;
}

const unitsSql = (column: string) => `GREATEST(1, ceil(${column}::numeric / ${DELIVERY_METER.unitBytes}))::bigint`;

/**
 * The dead letters a replay takes: the endpoint's failed and expired deliveries created in the window (optionally
 * of one event type), each the latest generation of its message to the endpoint (a dead letter already replayed
 * is taken through its newest generation only, so a message is sent once per replay). `available`: the content
 * can still be sent (not redacted, not past retention).
 */
const CANDIDATES = `
  FROM deliveries d
  JOIN messages m ON m.id = d.message_id
  JOIN tenants t ON t.id = m.tenant_id
  LEFT JOIN team_settings s ON s.team_id = d.team_id
 WHERE d.endpoint_id = $1 AND d.team_id = $2 AND d.status IN ('failed', 'expired')
   AND d.created_at >= $3 AND d.created_at < $4
   AND ($5::text IS NULL OR d.event_type = $5)
   AND NOT EXISTS (SELECT 1 FROM ${laterGenerationsSql('d')})`;
const AVAILABLE = `(m.redacted_at IS NULL AND m.content_erased_at IS NULL
   AND message_retained_until(m.retained_until, m.created_at, m.expires_at, s.payload_retention_days, t.deleted_at) > $6)`;

/**
 * Bulk replays (POST /replays): one endpoint's dead letters of a window become new delivery generations in batches
 * run as pg-boss jobs. Each batch is one transaction: it creates its generations, charges them to the key that
 * started the replay and moves the replay's cursor, so a worker killed mid-batch leaves nothing half done and the
 * job, handed out again, goes on from the cursor without creating or charging anything twice. A replay stops at
 * max_cost_usd (completed, reason max_cost_reached) or at the key's spending limit (failed), and emits
 * webhooks.replay.completed once its generations have all finished, or webhooks.replay.failed when it stops.
 */
export class ReplayService {
  constructor(private readonly deps: ReplayServiceDeps) {}

  async createReplay(ctx: CallContext, input: CreateReplayInput): Promise<ReplayView | ReplayEstimateView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { clock, limits } = this.deps;
      const teamId = ctx.actor.teamId;
      const now = clock.now();
      const window = parseWindow(input, now);
      const maxCost = input.max_cost_usd === undefined ? null : parseUsd(input.max_cost_usd);
      const [endpoint]: { tenant_id: string; status: string; deleted: boolean }[] = await tx.query(
        `SELECT tenant_id, status, deleted_at IS NOT NULL AS deleted FROM endpoints WHERE id = $1 AND team_id = $2`,
        [input.endpoint_id, teamId],
      );
      if (!endpoint) throw invalidField('endpoint_id', 'endpoint_id must be an endpoint of the team');
      if (endpoint.deleted) throw new ServiceError('invalid_state', 'the endpoint was deleted');
      if (endpoint.status === 'disabled')
        throw new ServiceError('invalid_state', 'the endpoint is disabled; resume it first');
      const estimate = await this.estimate(tx, teamId, input.endpoint_id, window, input.event_type ?? null, now);
      const price = (units: bigint) => units * DELIVERY_METER.unitPriceMicros;
      if (input.dry_run)
        return {
          dry_run: true,
          endpoint_id: input.endpoint_id,
          created_after: window.after.toISOString(),
          created_before: window.before.toISOString(),
          event_type: input.event_type ?? null,
          max_cost_usd: maxCost === null ? null : formatUsd(maxCost),
          matched: estimate.matched,
          estimate: {
            deliveries: estimate.available,
            skipped: estimate.matched - estimate.available,
            cost_usd: formatUsd(price(estimate.units)),
          },
          within_max_cost: await this.withinMaxCost(tx, teamId, input, window, maxCost, estimate, now),
        };

      // Counted after the team's replay lock, so racing starts see each other's replays.
      await lockTeamReplays(tx, teamId);
      const [active]: { n: number; card: boolean }[] = await tx.query(
        `SELECT (SELECT count(*)::int FROM replays WHERE team_id = $1 AND status IN ('running', 'delivering')) AS n,
                (SELECT has_payment_card FROM teams WHERE id = $1) AS card`,
        [teamId],
      );
      if (active!.n >= limits.max_active_replays.value)
        throw new ServiceError(
          'quota_exceeded',
          `at most ${limits.max_active_replays.value} replays of a team run at once; wait for one to finish or cancel one`,
        );
      if (!active!.card) throw new ServiceError('billing_required', 'the account has no payment card');
      const id = newId('replay', clock);
      await tx.query(
        `INSERT INTO replays (id, team_id, endpoint_id, tenant_id, event_type, window_after, window_before,
                              max_cost_micros, paying_key_id, status, matched, estimate_deliveries, estimate_units,
                              created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'running', $10, $11, $12, $13, $13)`,
        [
          id,
          teamId,
          input.endpoint_id,
          endpoint.tenant_id,
          input.event_type ?? null,
          window.after,
          window.before,
          maxCost?.toString() ?? null,
          ctx.actor.keyId,
          estimate.matched,
          estimate.available,
          estimate.units.toString(),
          now,
        ],
      );
      await this.deps.jobs.send(tx, replayBatchJob, [{ payload: { replay_id: id }, startAfter: now }]);
      return this.read(tx, teamId, id);
    });
  }

  async getReplay(ctx: CallContext, id: string): Promise<ReplayView> {
    return this.read(reader(this.deps.db, ctx), ctx.actor.teamId, id);
  }

  async listReplays(ctx: CallContext, query: ListReplaysQuery): Promise<Page<ReplayView>> {
    const limit = parseLimit(query.limit);
    const scope = replayListScope(ctx.actor.teamId, query.endpoint_id ?? null);
    const after = decodeCursor(scope, query.cursor);
    const rows: ReplayRow[] = await reader(this.deps.db, ctx).query(
      `${SELECT_REPLAY}
        WHERE r.team_id = $1 AND ($2::text IS NULL OR r.endpoint_id = $2) AND ($3::text IS NULL OR r.id > $3)
        ORDER BY r.id
        LIMIT $4`,
      [ctx.actor.teamId, query.endpoint_id ?? null, after, limit + 1],
    );
    return toPage(scope, rows, limit, (row) => toReplayView(row));
  }

  /**
   * The replays of many endpoints, a page each, in one statement (GraphQL `Endpoint.replays` for a page of
   * endpoints): each page and cursor is the one GET /replays answers with `endpoint_id`.
   */
  async listReplaysOfEndpoints(
    ctx: CallContext,
    requests: readonly EndpointReplaysRequest[],
  ): Promise<PageAnswer<ReplayView>[]> {
    const checked = checkEach(requests, (request) => {
      const limit = parseLimit(request.limit);
      const scope = replayListScope(ctx.actor.teamId, request.endpointId);
      return { endpointId: request.endpointId, limit, scope, after: decodeCursor(scope, request.cursor) };
    });
    const valid = passed(checked);
    const rows: (ReplayRow & { ord: string })[] =
      valid.length === 0
        ? []
        : await reader(this.deps.db, ctx).query(
            `SELECT k.ord, ${REPLAY_COLUMNS}
               FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS k(endpoint_id, after, lim, ord)
              CROSS JOIN LATERAL (
                SELECT * FROM replays x
                 WHERE x.team_id = $1 AND x.endpoint_id = k.endpoint_id AND (k.after IS NULL OR x.id > k.after)
                 ORDER BY x.id
                 LIMIT k.lim) r
              ORDER BY k.ord, r.id`,
            [
              ctx.actor.teamId,
              valid.map((entry) => entry.endpointId),
              valid.map((entry) => entry.after),
              valid.map((entry) => entry.limit + 1),
            ],
          );
    const grouped = rowsByRequest(rows, valid.length);
    let next = 0;
    return checked.map((entry) =>
      entry instanceof ServiceError
        ? entry
        : toPage(entry.scope, grouped[next++] ?? [], entry.limit, (row) => toReplayView(row)),
    );
  }

  /**
   * POST /replays/{id}/cancel: a running replay creates no more generations (those created run). Canceling a
   * canceled replay changes nothing; a replay that is no longer creating is 409 invalid_state.
   */
  async cancelReplay(ctx: CallContext, id: string): Promise<ReplayView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const [row]: { status: ReplayStatus }[] = await tx.query(
        `SELECT status FROM replays WHERE id = $1 AND team_id = $2 FOR UPDATE`,
        [id, ctx.actor.teamId],
      );
      if (!row) throw notFound('replay');
      if (row.status === 'running') {
        const now = this.deps.clock.now();
        await tx.query(
          `UPDATE replays SET status = 'canceled', reason = 'canceled', updated_at = $2, finished_at = $2 WHERE id = $1`,
          [id, now],
        );
      } else if (row.status !== 'canceled')
        throw new ServiceError('invalid_state', `a ${row.status} replay is no longer creating deliveries`);
      return this.read(tx, ctx.actor.teamId, id);
    });
  }

  /**
   * One batch of a running replay, in one transaction: the next dead letters after the cursor, the ones whose
   * content is gone counted as skipped, as many generations as max_cost and the key's remaining limit allow,
   * their charge, the cursor, and the next job (another batch, or the completion check).
   */
  async runBatch(replayId: string): Promise<void> {
    try {
      await this.deps.db.transaction((tx) => this.batch(tx, replayId));
    } catch (error) {
      if (isServiceError(error) && (error.code === 'spending_limit' || error.code === 'billing_required'))
        await this.deps.db.transaction((tx) => this.stop(tx, replayId, 'failed', error.code));
      else throw error;
    }
  }

  /**
   * The worker gave up on one of the replay's jobs (a batch or the completion check failed on every try): the replay
   * ends failed with reason job_failed and emits webhooks.replay.failed; generations already created go on.
   */
  async giveUp(replayId: string): Promise<void> {
    await this.deps.db.transaction((tx) => this.stop(tx, replayId, 'failed', 'job_failed', ['running', 'delivering']));
  }

  /**
   * Replays whose work is gone: running or delivering, yet no job of theirs waits, retries or runs. Every step sends
   * the replay's next job in its own transaction, so this happens only when pg-boss failed a job without the
   * worker's give-up step (a worker killed on the job's last allowed try). Each ends failed with job_failed, as a
   * give-up would. Called by the reconcile sweep; answers how many it ended.
   */
  async giveUpStranded(): Promise<number> {
    const stranded: { id: string }[] = await this.deps.db.query(
      `SELECT r.id FROM replays r
        WHERE r.status IN ('running', 'delivering')
          AND NOT EXISTS (SELECT 1 FROM ${JOB_SCHEMA}.job j
                           WHERE j.name IN ($1, $2) AND j.state IN ('created', 'retry', 'active')
                             AND j.data->>'replay_id' = r.id)
        ORDER BY r.id LIMIT 100`,
      [replayBatchJob.queue, replayCheckJob.queue],
    );
    for (const { id } of stranded) await this.giveUp(id);
    return stranded.length;
  }

  /** Completes a delivering replay once none of its generations is pending; else looks again later. */
  async checkCompletion(replayId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const now = this.deps.clock.now();
      const [row]: ReplayRow[] = await tx.query(`SELECT * FROM replays WHERE id = $1 FOR UPDATE`, [replayId]);
      if (!row || row.status !== 'delivering') return;
      const [counts]: { pending: number; succeeded: number; failed: number }[] = await tx.query(
        `SELECT count(*) FILTER (WHERE status IN ('queued', 'in_flight', 'retry_wait'))::int AS pending,
                count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
                count(*) FILTER (WHERE status IN ('failed', 'expired', 'canceled'))::int AS failed
           FROM deliveries WHERE replay_id = $1`,
        [replayId],
      );
      if (counts!.pending > 0) {
        await this.deps.jobs.send(tx, replayCheckJob, [
          { payload: { replay_id: replayId }, startAfter: new Date(now.getTime() + CHECK_EVERY_MS) },
        ]);
        return;
      }
      await tx.query(
        `UPDATE replays SET status = 'completed', succeeded = $2, failed = $3, updated_at = $4, finished_at = $4
          WHERE id = $1`,
        [replayId, counts!.succeeded, counts!.failed, now],
      );
      await this.deps.events.emit(tx, [
        {
          type: 'webhooks.replay.completed',
          teamId: row.team_id,
          tenantId: row.tenant_id,
          resourceId: replayId,
          data: {
            replay_id: replayId,
            deliveries: row.created_count,
            succeeded: counts!.succeeded,
            failed: counts!.failed,
          },
        },
      ]);
    });
  }

  private async batch(tx: EntityManager, replayId: string): Promise<void> {
    const { clock, limits, jobs, billing } = this.deps;
    const now = clock.now();
    const [replay]: ReplayRow[] = await tx.query(`SELECT * FROM replays WHERE id = $1 FOR UPDATE`, [replayId]);
    if (!replay || replay.status !== 'running') return;
    await lockTeamQueue(tx, replay.team_id);
    const [state]: {
      endpoint_status: string;
      endpoint_deleted: boolean;
      pending: string;
      content_bytes: string;
      spent: string | null;
      spending_limit: string | null;
    }[] = await tx.query(
      `SELECT e.status AS endpoint_status, e.deleted_at IS NOT NULL AS endpoint_deleted,
              (SELECT coalesce(sum(pending), 0) FROM team_queue_counts WHERE team_id = $2) AS pending,
              (SELECT coalesce(sum(content_bytes), 0) FROM team_queue_counts WHERE team_id = $2) AS content_bytes,
              (SELECT spent_micros FROM key_monthly_spend WHERE key_id = $3 AND billing_month = $4) AS spent,
              (SELECT spending_limit_micros FROM api_keys WHERE id = $3) AS spending_limit
         FROM endpoints e WHERE e.id = $1`,
      [replay.endpoint_id, replay.team_id, replay.paying_key_id, billingMonth(now)],
    );
    if (state!.endpoint_deleted) return this.stop(tx, replayId, 'failed', 'endpoint_deleted');
    if (state!.endpoint_status === 'disabled') return this.stop(tx, replayId, 'failed', 'endpoint_disabled');

    const rows: Candidate[] = await tx.query(
      `SELECT d.id, d.tenant_id, d.message_id, d.endpoint_id, d.event_type, d.generation, d.content_type, d.body,
              d.body_bytes, d.created_at, ${AVAILABLE} AS available
         ${CANDIDATES}
          AND ($7::timestamptz IS NULL OR (d.created_at, d.id) > ($7::timestamptz, $8::text))
        ORDER BY d.created_at, d.id
        LIMIT $9`,
      [
        replay.endpoint_id,
        replay.team_id,
        replay.window_after,
        replay.window_before,
        replay.event_type,
        now,
        replay.cursor_created_at,
        replay.cursor_id,
        REPLAY_BATCH_SIZE,
      ],
    );
    if (rows.length === 0) return this.finishCreating(tx, replay, null);
    if (BigInt(state!.pending) + BigInt(rows.length) > BigInt(limits.max_pending_deliveries.value)) {
      // The team's queue is full: look again shortly, without moving the cursor.
      await jobs.send(tx, replayBatchJob, [
        { payload: { replay_id: replayId }, startAfter: new Date(now.getTime() + QUEUE_FULL_WAIT_MS) },
      ]);
      return;
    }

    const costLeft =
      replay.max_cost_micros === null ? null : BigInt(replay.max_cost_micros) - BigInt(replay.cost_micros);
    const keyLeft = state!.spending_limit === null ? null : BigInt(state!.spending_limit) - BigInt(state!.spent ?? '0');
    const taken: NewGeneration[] = [];
    let skipped = 0;
    let spend = 0n;
    let stoppedBy: 'max_cost_reached' | 'spending_limit' | null = null;
    let last: Candidate | null = null;
    for (const row of rows) {
      if (!row.available) {
        skipped += 1;
        last = row;
        continue;
      }
      const units = unitsFor(row.body_bytes, 'webhooks.delivery_16k');
      const cost = BigInt(units) * DELIVERY_METER.unitPriceMicros;
      if (costLeft !== null && spend + cost > costLeft) {
        stoppedBy = 'max_cost_reached';
        break;
      }
      if (keyLeft !== null && spend + cost > keyLeft) {
        stoppedBy = 'spending_limit';
        break;
      }
      spend += cost;
      last = row;
      taken.push({
        replayOf: row.id,
        tenantId: row.tenant_id,
        messageId: row.message_id,
        endpointId: row.endpoint_id,
        eventType: row.event_type,
        generation: row.generation + 1,
        contentType: row.content_type,
        body: row.body,
        bodyBytes: row.body_bytes,
        units,
      });
    }
    const ids = await insertGenerations(tx, this.deps, taken, {
      teamId: replay.team_id,
      payingKeyId: replay.paying_key_id,
      replayId,
      windowMs: limits.delivery_window_hours.value * HOUR,
    });
    await tx.query(
      `UPDATE replays SET created_count = created_count + $2, skipped = skipped + $3, cost_micros = cost_micros + $4,
              cursor_created_at = coalesce($5, cursor_created_at), cursor_id = coalesce($6, cursor_id), updated_at = $7
        WHERE id = $1`,
      [replayId, ids.length, skipped, spend.toString(), last?.created_at ?? null, last?.id ?? null, now],
    );
    if (stoppedBy === 'spending_limit') await this.stop(tx, replayId, 'failed', 'spending_limit');
    else if (stoppedBy === 'max_cost_reached') await this.finishCreating(tx, replay, 'max_cost_reached');
    else if (rows.length < REPLAY_BATCH_SIZE) await this.finishCreating(tx, replay, null);
    else await jobs.send(tx, replayBatchJob, [{ payload: { replay_id: replayId }, startAfter: now }]);
    // Last: the key's spend row stays locked only from here to the commit.
    if (taken.length > 0)
      await billing.charge(
        tx,
        { teamId: replay.team_id, keyId: replay.paying_key_id },
        ids.map((id, i) => ({ meter: 'webhooks.delivery_16k' as const, units: taken[i]!.units, resourceId: id })),
      );
  }

  /** Creation is over: the replay delivers its generations; the completion check follows them. */
  private async finishCreating(tx: EntityManager, replay: ReplayRow, reason: string | null): Promise<void> {
    const now = this.deps.clock.now();
    await tx.query(`UPDATE replays SET status = 'delivering', reason = $2, updated_at = $3 WHERE id = $1`, [
      replay.id,
      reason,
      now,
    ]);
    await this.deps.jobs.send(tx, replayCheckJob, [{ payload: { replay_id: replay.id }, startAfter: now }]);
  }

  /**
   * The replay stops creating and fails with `reason` (its created generations run); emits replay.failed. Only a
   * replay in one of `from` (a running one, unless the worker gave up on it) changes.
   */
  private async stop(
    tx: EntityManager,
    replayId: string,
    status: 'failed',
    reason: string,
    from: readonly ReplayStatus[] = ['running'],
  ): Promise<void> {
    const now = this.deps.clock.now();
    // TypeORM answers an UPDATE with [rows, count].
    const [rows]: [{ team_id: string; tenant_id: string; created_count: number }[], number] = await tx.query(
      `UPDATE replays SET status = $2, reason = $3, updated_at = $4, finished_at = $4
        WHERE id = $1 AND status = ANY($5::text[])
        RETURNING team_id, tenant_id, created_count`,
      [replayId, status, reason, now, from],
    );
    const row = rows[0];
    if (!row) return;
    await this.deps.events.emit(tx, [
      {
        type: 'webhooks.replay.failed',
        teamId: row.team_id,
        tenantId: row.tenant_id,
        resourceId: replayId,
        data: { replay_id: replayId, deliveries: row.created_count, reason },
      },
    ]);
  }

  private async estimate(
    tx: EntityManager,
    teamId: string,
    endpointId: string,
    window: { after: Date; before: Date },
    eventType: string | null,
    now: Date,
  ): Promise<{ matched: number; available: number; units: bigint }> {
    const [row]: { matched: number; available: number; units: string | null }[] = await tx.query(
      `SELECT count(*)::int AS matched, count(*) FILTER (WHERE ${AVAILABLE})::int AS available,
              sum(${unitsSql('d.body_bytes')}) FILTER (WHERE ${AVAILABLE}) AS units
         ${CANDIDATES}`,
      [endpointId, teamId, window.after, window.before, eventType, now],
    );
    return { matched: row!.matched, available: row!.available, units: BigInt(row!.units ?? '0') };
  }

  /** How far max_cost_usd reaches, oldest first (as the replay goes). */
  private async withinMaxCost(
    tx: EntityManager,
    teamId: string,
    input: CreateReplayInput,
    window: { after: Date; before: Date },
    maxCost: bigint | null,
    estimate: { available: number; units: bigint },
    now: Date,
  ): Promise<{ deliveries: number; cost_usd: string }> {
    const all = {
      deliveries: estimate.available,
      cost_usd: formatUsd(estimate.units * DELIVERY_METER.unitPriceMicros),
    };
    if (maxCost === null) return all;
    const [row]: { deliveries: number; units: string | null }[] = await tx.query(
      `SELECT count(*)::int AS deliveries, max(running) AS units FROM (
         SELECT sum(${unitsSql('d.body_bytes')}) OVER (ORDER BY d.created_at, d.id) AS running
           ${CANDIDATES} AND ${AVAILABLE}) x
        WHERE running * $7 <= $8`,
      [
        input.endpoint_id,
        teamId,
        window.after,
        window.before,
        input.event_type ?? null,
        now,
        DELIVERY_METER.unitPriceMicros.toString(),
        maxCost.toString(),
      ],
    );
    return {
      deliveries: row!.deliveries,
      cost_usd: formatUsd(BigInt(row!.units ?? '0') * DELIVERY_METER.unitPriceMicros),
    };
  }

  private async read(db: EntityManager, teamId: string, id: string): Promise<ReplayView> {
    const rows: ReplayRow[] = await db.query(`${SELECT_REPLAY} WHERE r.id = $2 AND r.team_id = $1`, [teamId, id]);
    if (!rows[0]) throw notFound('replay');
    return toReplayView(rows[0]);
  }
}

/** A replay row `r` with the outcomes of the deliveries it created. */
const REPLAY_COLUMNS = `
  r.*,
  (SELECT json_build_object(
            'succeeded', count(*) FILTER (WHERE status = 'succeeded'),
            'failed', count(*) FILTER (WHERE status IN ('failed', 'expired', 'canceled')),
            'pending', count(*) FILTER (WHERE status IN ('queued', 'in_flight', 'retry_wait')))
     FROM deliveries WHERE replay_id = r.id) AS outcomes`;

const SELECT_REPLAY = `SELECT ${REPLAY_COLUMNS} FROM replays r`;

/** What a cursor of GET /replays is bound to. */
function replayListScope(teamId: string, endpointId: string | null): ListScope {
  return { teamId, list: 'replays', filters: { endpoint_id: endpointId } };
}

/** One page of an endpoint's replays (GraphQL `Endpoint.replays`). */
export interface EndpointReplaysRequest {
  endpointId: string;
  limit?: unknown;
  cursor?: unknown;
}

function toReplayView(row: ReplayRow): ReplayView {
  const outcomes = row.outcomes ?? { succeeded: 0, failed: 0, pending: 0 };
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    tenant_id: row.tenant_id,
    created_after: row.window_after.toISOString(),
    created_before: row.window_before.toISOString(),
    event_type: row.event_type,
    max_cost_usd: row.max_cost_micros === null ? null : formatUsd(BigInt(row.max_cost_micros)),
    paying_key_id: row.paying_key_id,
    status: row.status,
    reason: row.reason,
    counts: {
      matched: row.matched,
      created: row.created_count,
      skipped: row.skipped,
      succeeded: outcomes.succeeded,
      failed: outcomes.failed,
      pending: outcomes.pending,
    },
    cost_usd: formatUsd(BigInt(row.cost_micros)),
    estimate: {
      deliveries: row.estimate_deliveries,
      skipped: row.matched - row.estimate_deliveries,
      cost_usd: formatUsd(BigInt(row.estimate_units) * DELIVERY_METER.unitPriceMicros),
    },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
