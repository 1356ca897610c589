import type { EntityManager } from 'typeorm';
import { billingMonth, unitsFor, type BillingService } from '../billing/billing.service.js';
import type { Limits } from '../catalog/limits.js';
import { HOUR, SECOND } from '../common/clock.js';
import { lockTeamQueue } from '../common/transaction.js';
import { insertGenerations, type NewGeneration } from './replay-generations.js';
import { finishCreating, stopReplay, type ReplayEndingDeps } from './replay-endings.js';
import { DELIVERY_METER, readCandidates, type Candidate } from './replay-estimates.js';
import { replayBatchJob } from './replay.jobs.js';
import type { ReplayRow } from './replay.view.js';

/** Dead letters looked at per batch (each batch is one transaction and one charge). */
export const REPLAY_BATCH_SIZE = 100;
const QUEUE_FULL_WAIT_MS = 5 * SECOND;

/** What a batch needs beyond ending a replay: the limits and the billing it charges. */
export interface ReplayBatchDeps extends ReplayEndingDeps {
  limits: Limits;
  billing: BillingService;
}

/**
 * One batch of a running replay, in `tx`: the next dead letters after the cursor, the ones whose content is gone
 * counted as skipped, as many generations as max_cost and the key's remaining limit allow, their charge, the
 * cursor, and the next job (another batch, or the completion check).
 */
export async function runReplayBatch(tx: EntityManager, deps: ReplayBatchDeps, replayId: string): Promise<void> {
  const { clock, limits, jobs, billing } = deps;
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
  if (state!.endpoint_deleted) return stopReplay(tx, deps, replayId, 'failed', 'endpoint_deleted');
  if (state!.endpoint_status === 'disabled') return stopReplay(tx, deps, replayId, 'failed', 'endpoint_disabled');

  const rows = await readCandidates(
    tx,
    {
      teamId: replay.team_id,
      endpointId: replay.endpoint_id,
      window: { after: replay.window_after, before: replay.window_before },
      eventType: replay.event_type,
    },
    { createdAt: replay.cursor_created_at, id: replay.cursor_id },
    REPLAY_BATCH_SIZE,
    now,
  );
  if (rows.length === 0) return finishCreating(tx, deps, replay, null);
  if (BigInt(state!.pending) + BigInt(rows.length) > BigInt(limits.max_pending_deliveries.value)) {
    // The team's queue is full: look again shortly, without moving the cursor.
    await jobs.send(tx, replayBatchJob, [
      { payload: { replay_id: replayId }, startAfter: new Date(now.getTime() + QUEUE_FULL_WAIT_MS) },
    ]);
    return;
  }

  const costLeft = replay.max_cost_micros === null ? null : BigInt(replay.max_cost_micros) - BigInt(replay.cost_micros);
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
  const ids = await insertGenerations(tx, deps, taken, {
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
  if (stoppedBy === 'spending_limit') await stopReplay(tx, deps, replayId, 'failed', 'spending_limit');
  else if (stoppedBy === 'max_cost_reached') await finishCreating(tx, deps, replay, 'max_cost_reached');
  else if (rows.length < REPLAY_BATCH_SIZE) await finishCreating(tx, deps, replay, null);
  else await jobs.send(tx, replayBatchJob, [{ payload: { replay_id: replayId }, startAfter: now }]);
  // Last: the key's spend row stays locked only from here to the commit.
  if (taken.length > 0)
    await billing.charge(
      tx,
      { teamId: replay.team_id, keyId: replay.paying_key_id },
      ids.map((id, i) => ({ meter: 'webhooks.delivery_16k' as const, units: taken[i]!.units, resourceId: id })),
    );
}
