import type { DataSource, EntityManager } from 'typeorm';
import { formatUsd, parseUsd } from '../catalog/catalog.js';
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
  type Page,
  type PageAnswer,
} from '../common/paging.js';
import { inTransaction, lockTeamReplays, reader } from '../common/transaction.js';
import { parseWindow } from '../common/window.js';
import { runReplayBatch, type ReplayBatchDeps } from './replay-batch.js';
import { checkReplayCompletion, stopReplay, strandedReplayIds } from './replay-endings.js';
import { DELIVERY_METER, estimateReplay, withinMaxCost, type ReplaySelection } from './replay-estimates.js';
import type { CreateReplayInput, ListReplaysQuery } from './replay.inputs.js';
import { replayBatchJob } from './replay.jobs.js';
import {
  REPLAY_COLUMNS,
  replayListScope,
  SELECT_REPLAY,
  toReplayView,
  type EndpointReplaysRequest,
  type ReplayEstimateView,
  type ReplayRow,
  type ReplayStatus,
  type ReplayView,
} from './replay.view.js';

export interface ReplayServiceDeps extends ReplayBatchDeps {
  db: DataSource;
}

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
      const selection: ReplaySelection = {
        teamId,
        endpointId: input.endpoint_id,
        window,
        eventType: input.event_type ?? null,
      };
      const estimate = await estimateReplay(tx, selection, now);
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
          within_max_cost: await withinMaxCost(tx, selection, maxCost, estimate, now),
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
   * One batch of a running replay, in one transaction (replay-batch.ts); a batch the key's spending limit or a
   * missing payment card refuses fails its replay.
   */
  async runBatch(replayId: string): Promise<void> {
    try {
      await this.deps.db.transaction((tx) => runReplayBatch(tx, this.deps, replayId));
    } catch (error) {
      if (isServiceError(error) && (error.code === 'spending_limit' || error.code === 'billing_required'))
        await this.deps.db.transaction((tx) => stopReplay(tx, this.deps, replayId, 'failed', error.code));
      else throw error;
    }
  }

  /**
   * The worker gave up on one of the replay's jobs (a batch or the completion check failed on every try): the replay
   * ends failed with reason job_failed and emits webhooks.replay.failed; generations already created go on.
   */
  async giveUp(replayId: string): Promise<void> {
    await this.deps.db.transaction((tx) =>
      stopReplay(tx, this.deps, replayId, 'failed', 'job_failed', ['running', 'delivering']),
    );
  }

  /**
   * Replays whose work is gone: running or delivering, yet no job of theirs waits, retries or runs. Every step sends
   * the replay's next job in its own transaction, so this happens only when pg-boss failed a job without the
   * worker's give-up step (a worker killed on the job's last allowed try). Each ends failed with job_failed, as a
   * give-up would. Called by the reconcile sweep; answers how many it ended.
   */
  async giveUpStranded(): Promise<number> {
    const stranded = await strandedReplayIds(this.deps.db);
    for (const id of stranded) await this.giveUp(id);
    return stranded.length;
  }

  /** Completes a delivering replay once none of its generations is pending; else looks again later. */
  async checkCompletion(replayId: string): Promise<void> {
    await this.deps.db.transaction((tx) => checkReplayCompletion(tx, this.deps, replayId));
  }

  private async read(db: EntityManager, teamId: string, id: string): Promise<ReplayView> {
    const rows: ReplayRow[] = await db.query(`${SELECT_REPLAY} WHERE r.id = $2 AND r.team_id = $1`, [teamId, id]);
    if (!rows[0]) throw notFound('replay');
    return toReplayView(rows[0]);
  }
}
