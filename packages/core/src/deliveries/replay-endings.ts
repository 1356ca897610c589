import type { EntityManager } from 'typeorm';
import { SECOND, type Clock } from '../common/clock.js';
import type { OperationalEventService } from '../events/operational-event.service.js';
import { JOB_SCHEMA, type JobQueue } from '../jobs/job-queue.js';
import { replayBatchJob, replayCheckJob } from './replay.jobs.js';
import type { ReplayRow, ReplayStatus } from './replay.view.js';

const CHECK_EVERY_MS = 5 * SECOND;

/** What ending a replay needs: the clock, the next job, the operational event. */
export interface ReplayEndingDeps {
  clock: Clock;
  jobs: JobQueue;
  events: OperationalEventService;
}

/** Creation is over: the replay delivers its generations; the completion check follows them. */
export async function finishCreating(
  tx: EntityManager,
  deps: ReplayEndingDeps,
  replay: ReplayRow,
  reason: string | null,
): Promise<void> {
  const now = deps.clock.now();
  await tx.query(`UPDATE replays SET status = 'delivering', reason = $2, updated_at = $3 WHERE id = $1`, [
    replay.id,
    reason,
    now,
  ]);
  await deps.jobs.send(tx, replayCheckJob, [{ payload: { replay_id: replay.id }, startAfter: now }]);
}

/**
 * The replay stops creating and fails with `reason` (its created generations run); emits replay.failed. Only a
 * replay in one of `from` (a running one, unless the worker gave up on it) changes.
 */
export async function stopReplay(
  tx: EntityManager,
  deps: ReplayEndingDeps,
  replayId: string,
  status: 'failed',
  reason: string,
  from: readonly ReplayStatus[] = ['running'],
): Promise<void> {
  const now = deps.clock.now();
  // TypeORM answers an UPDATE with [rows, count].
  const [rows]: [{ team_id: string; tenant_id: string; created_count: number }[], number] = await tx.query(
    `UPDATE replays SET status = $2, reason = $3, updated_at = $4, finished_at = $4
      WHERE id = $1 AND status = ANY($5::text[])
      RETURNING team_id, tenant_id, created_count`,
    [replayId, status, reason, now, from],
  );
  const row = rows[0];
  if (!row) return;
  await deps.events.emit(tx, [
    {
      type: 'webhooks.replay.failed',
      teamId: row.team_id,
      tenantId: row.tenant_id,
      resourceId: replayId,
      data: { replay_id: replayId, deliveries: row.created_count, reason },
    },
  ]);
}

/** Completes a delivering replay once none of its generations is pending; else looks again later. */
export async function checkReplayCompletion(
  tx: EntityManager,
  deps: ReplayEndingDeps,
  replayId: string,
): Promise<void> {
  const now = deps.clock.now();
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
    await deps.jobs.send(tx, replayCheckJob, [
      { payload: { replay_id: replayId }, startAfter: new Date(now.getTime() + CHECK_EVERY_MS) },
    ]);
    return;
  }
  await tx.query(
    `UPDATE replays SET status = 'completed', succeeded = $2, failed = $3, updated_at = $4, finished_at = $4
      WHERE id = $1`,
    [replayId, counts!.succeeded, counts!.failed, now],
  );
  await deps.events.emit(tx, [
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
}

/** Replays running or delivering with no job of theirs waiting, retrying or running (at most 100, by ID). */
export async function strandedReplayIds(db: Pick<EntityManager, 'query'>): Promise<string[]> {
  const stranded: { id: string }[] = await db.query(
    `SELECT r.id FROM replays r
      WHERE r.status IN ('running', 'delivering')
        AND NOT EXISTS (SELECT 1 FROM ${JOB_SCHEMA}.job j
                         WHERE j.name IN ($1, $2) AND j.state IN ('created', 'retry', 'active')
                           AND j.data->>'replay_id' = r.id)
      ORDER BY r.id LIMIT 100`,
    [replayBatchJob.queue, replayCheckJob.queue],
  );
  return stranded.map((row) => row.id);
}
