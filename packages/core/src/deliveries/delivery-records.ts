import type { DataSource, EntityManager } from 'typeorm';
import { retryOnConflict } from '../common/transaction.js';
import { finishedFactsSql } from '../analytics/analytics-facts.js';
import type { EngineEvent, EngineEventSink } from './engine-events.js';
import { heldEvents, holdCandidates, holdSql } from './ordering.js';

// Kept for the engine's settlement, which imports them from here.
export type { EngineEvent, EngineEventSink } from './engine-events.js';

/** team_queue_counts shards written by settlement (admission writes 0 to 3, one per admission slot). */
export const SETTLEMENT_SHARDS = [4, 5, 6, 7] as const;

/** A delivery that reached a terminal state, for counters and events. */
export interface FinishedDelivery {
  id: string;
  teamId: string;
  tenantId: string;
  messageId: string;
  endpointId: string;
  status: 'succeeded' | 'failed' | 'expired' | 'canceled';
  attempts: number;
  lastStatusCode: number | null;
  reason: string | null;
  /** The attempt number of the lease the finishing worker holds (claim-time finishes only). */
  fence?: number;
  /**
   * false: on an ordered endpoint it was not the head (the expiry sweep reached a delivery waiting behind another),
   * so it leaves a gap in the numbers and never holds the endpoint. Every other finish holds as its settings say.
   */
  wasHead?: boolean;
}

/** A delivery row as the statements that finish deliveries return it (`RETURNING ${FINISHED_ROW_COLUMNS}`). */
export interface FinishedRow {
  id: string;
  team_id: string;
  tenant_id: string;
  message_id: string;
  endpoint_id: string;
  attempt_count: number;
  last_status_code: number | null;
  /** Only from the expiry sweep: whether it was its ordered endpoint's head (FinishedDelivery.wasHead). */
  was_head?: boolean;
}

/** The columns of FinishedRow, for a RETURNING clause over `deliveries d`. */
export const FINISHED_ROW_COLUMNS =
  'd.id, d.team_id, d.tenant_id, d.message_id, d.endpoint_id, d.attempt_count, d.last_status_code';

/** Finished rows that all ended the same way, for recordFinished. */
export function finishedFromRows(
  rows: readonly FinishedRow[],
  status: FinishedDelivery['status'],
  reason: string,
): FinishedDelivery[] {
  return rows.map((d) => ({
    id: d.id,
    teamId: d.team_id,
    tenantId: d.tenant_id,
    messageId: d.message_id,
    endpointId: d.endpoint_id,
    status,
    attempts: d.attempt_count,
    lastStatusCode: d.last_status_code,
    reason,
    ...(d.was_head === undefined ? {} : { wasHead: d.was_head }),
  }));
}

/** The analytics facts of recordFinished's deliveries, in its placeholders. */
const FINISHED_FACTS = finishedFactsSql({ deliveryIds: '$6::text[]', statuses: '$7::text[]' });

/**
 * Counters, analytics facts and events for deliveries that just finished (every finished delivery passes here:
 * settlement, dispatch expiry and cancellations): one statement for the endpoints' and teams' pending counts and
 * the facts, one for the events. The caller has set their finished_at, the time the facts count at.
 */
export async function recordFinished(
  tx: EntityManager,
  finished: readonly FinishedDelivery[],
  events: EngineEventSink,
  now: Date,
): Promise<void> {
  if (finished.length === 0) return;
  const perEndpoint = new Map<string, number>();
  const perTeam = new Map<string, number>();
  for (const d of finished) {
    perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1);
    perTeam.set(d.teamId, (perTeam.get(d.teamId) ?? 0) + 1);
  }
  // Rows are locked in ID order, as admission does. The decrements go to one of the shards admission never writes
  // (4 to 7), so a settlement never holds a counter row an admission is about to write; readers sum the shards.
  const endpoints = [...perEndpoint.keys()].sort();
  const teams = [...perTeam.keys()].sort();
  const notable = finished.filter(
    (d): d is FinishedDelivery & { status: 'failed' | 'expired' } => d.status === 'failed' || d.status === 'expired',
  );
  // An ordered endpoint that holds on failure is paused by the same statement (deliveries/ordering.ts), when what
  // ended was its head.
  const hold = holdCandidates(
    notable
      .filter((d) => d.wasHead !== false)
      .map((d) => ({
        deliveryId: d.id,
        messageId: d.messageId,
        endpointId: d.endpointId,
        teamId: d.teamId,
        tenantId: d.tenantId,
        status: d.status,
        reason: d.reason,
      })),
  );
  const held: { id: string; version: string }[] = await tx.query(
    `WITH facts AS (${FINISHED_FACTS}),
     e AS (
       INSERT INTO endpoint_queue_counts AS q (endpoint_id, shard, pending)
       SELECT x.endpoint_id, $5::smallint, -x.n
         FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS x(endpoint_id, n, i)
        ORDER BY x.i
       ON CONFLICT (endpoint_id, shard) DO UPDATE SET pending = q.pending + EXCLUDED.pending),
     t AS (
       INSERT INTO team_queue_counts AS t (team_id, shard, pending)
       SELECT x.team_id, $5::smallint, -x.n FROM unnest($3::text[], $4::int[]) WITH ORDINALITY AS x(team_id, n, i)
        ORDER BY x.i
       ON CONFLICT (team_id, shard) DO UPDATE SET pending = t.pending + EXCLUDED.pending),
     held AS (${holdSql('$8::text[]', '$9::timestamptz')})
     SELECT id, version FROM held`,
    [
      endpoints,
      endpoints.map((id) => perEndpoint.get(id)!),
      teams,
      teams.map((id) => perTeam.get(id)!),
      SETTLEMENT_SHARDS[Math.floor(Math.random() * SETTLEMENT_SHARDS.length)]!,
      finished.map((d) => d.id),
      finished.map((d) => d.status),
      hold.ids,
      now,
    ],
  );
  if (notable.length === 0) return;
  await events.emit(tx, [
    ...notable.map((d): EngineEvent => ({
      type: d.status === 'failed' ? 'webhooks.delivery.failed' : 'webhooks.delivery.expired',
      teamId: d.teamId,
      tenantId: d.tenantId,
      resourceId: d.id,
      data: {
        delivery_id: d.id,
        message_id: d.messageId,
        endpoint_id: d.endpointId,
        attempts: d.attempts,
        last_status_code: d.lastStatusCode,
        reason: d.reason,
      },
    })),
    ...heldEvents(held, hold.first),
  ]);
}

/**
 * Cancels the waiting (queued or retry_wait) deliveries of endpoints that go away (deleted by the operator, with
 * their tenant, or disabled by the service). Their queue rows go first, and only rows no attempt holds: a delivery
 * in flight finishes its attempt, and the claim of its retry finds the endpoint gone and cancels it. With `limit`,
 * at most that many (rows another transaction holds are skipped): a backlog is canceled in bounded batches.
 */
export async function cancelWaitingDeliveries(
  tx: EntityManager,
  where: { endpointIds: readonly string[] } | { tenantId: string },
  reason: 'endpoint_deleted' | 'tenant_deleted' | 'endpoint_disabled',
  now: Date,
  limit?: number,
): Promise<number> {
  const byEndpoint = 'endpointIds' in where;
  const endpoints = byEndpoint ? 'SELECT unnest($1::text[])' : 'SELECT id FROM endpoints WHERE tenant_id = $1';
  const [rows]: [FinishedRow[], number] = await tx.query(
    `WITH gone AS (
       DELETE FROM delivery_queue q
        WHERE ${
          limit === undefined
            ? `q.lease_owner IS NULL AND q.endpoint_id IN (${endpoints})`
            : `q.delivery_id IN (SELECT b.delivery_id FROM delivery_queue b
                                  WHERE b.lease_owner IS NULL AND b.endpoint_id IN (${endpoints})
                                  LIMIT ${Math.floor(limit)} FOR UPDATE SKIP LOCKED)`
        }
       RETURNING q.delivery_id)
     UPDATE deliveries d SET status = 'canceled', last_error = $2, lease_expires_at = NULL, finished_at = $3,
                             updated_at = $3
       FROM gone WHERE d.id = gone.delivery_id AND d.status IN ('queued', 'retry_wait', 'in_flight')
     RETURNING ${FINISHED_ROW_COLUMNS}`,
    [byEndpoint ? where.endpointIds : where.tenantId, reason, now],
  );
  await recordFinished(tx, finishedFromRows(rows, 'canceled', reason), NO_EVENTS, now);
  return rows.length;
}

/**
 * Deliveries a claim finished instead of attempting (expired, canceled, credentials unreadable): their rows go
 * while this worker's lease still holds them (the fence), the deliveries get their final state with the attempts
 * made before this claim, and their counters, facts and events are written.
 */
export async function finishDeliveries(
  db: DataSource,
  workerId: string,
  finished: readonly FinishedDelivery[],
  now: Date,
  events: EngineEventSink,
): Promise<void> {
  await retryOnConflict(() =>
    db.transaction(async (tx) => {
      const [rows]: [{ id: string }[], number] = await tx.query(
        `WITH x AS (
           SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::int[])
             AS x(id, fence, status, reason, attempts)),
         gone AS (
           DELETE FROM delivery_queue q USING x
            WHERE q.delivery_id = x.id AND q.lease_owner = $6 AND q.attempt = x.fence
           RETURNING q.delivery_id)
         UPDATE deliveries d
            SET status = x.status, last_error = x.reason, attempt_count = x.attempts, lease_expires_at = NULL,
                finished_at = $7, updated_at = $7
           FROM x JOIN gone g ON g.delivery_id = x.id
          WHERE d.id = x.id
         RETURNING d.id`,
        [
          finished.map((f) => f.id),
          finished.map((f) => f.fence ?? 0),
          finished.map((f) => f.status),
          finished.map((f) => f.reason),
          finished.map((f) => f.attempts),
          workerId,
          now,
        ],
      );
      const done = new Set(rows.map((r) => r.id));
      await recordFinished(
        tx,
        finished.filter((f) => done.has(f.id)),
        events,
        now,
      );
    }),
  );
}

/** Queue rows whose delivery had finished already: this worker's lease holds them, and they go. */
export async function dropStaleRows(
  db: DataSource,
  workerId: string,
  rows: readonly { id: string; fence: number }[],
): Promise<void> {
  await db.query(
    `DELETE FROM delivery_queue q USING unnest($1::text[], $2::int[]) AS x(id, fence)
      WHERE q.delivery_id = x.id AND q.lease_owner = $3 AND q.attempt = x.fence`,
    [rows.map((r) => r.id), rows.map((r) => r.fence), workerId],
  );
}

/** Cancellations emit no operational event (only failures, expiries and endpoint changes do). */
export const NO_EVENTS: EngineEventSink = { emit: async () => undefined };

/** Content erased (redaction, retention): the team's stored-content counter goes down by what was freed. */
export async function releaseContentBytes(tx: EntityManager, freed: ReadonlyMap<string, number>): Promise<void> {
  const teams = [...freed.keys()].filter((team) => freed.get(team)! > 0).sort();
  if (teams.length === 0) return;
  await tx.query(
    `INSERT INTO team_queue_counts AS t (team_id, shard, content_bytes)
     SELECT x.team_id, $3::smallint, -x.bytes FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS x(team_id, bytes, i)
      ORDER BY x.i
     ON CONFLICT (team_id, shard) DO UPDATE SET content_bytes = t.content_bytes + EXCLUDED.content_bytes`,
    [
      teams,
      teams.map((team) => freed.get(team)!),
      SETTLEMENT_SHARDS[Math.floor(Math.random() * SETTLEMENT_SHARDS.length)]!,
    ],
  );
}

/**
 * Erases the content of messages (their body and every delivery's frozen copy) in the caller's transaction and
 * releases the stored bytes from the teams' counters. Returns the bytes freed per team.
 */
export async function eraseContent(
  tx: EntityManager,
  messageIds: readonly string[],
  now: Date,
): Promise<Map<string, number>> {
  const freed = new Map<string, number>();
  if (messageIds.length === 0) return freed;
  const rows: { team_id: string; bytes: string }[] = await tx.query(
    `WITH targets AS (
       SELECT id, team_id FROM messages WHERE id = ANY($1::text[]) AND content_erased_at IS NULL ORDER BY id
          FOR NO KEY UPDATE),
     sizes AS (
       SELECT t.team_id,
              coalesce((SELECT octet_length(c.body) FROM message_contents c WHERE c.message_id = t.id), 0)
              + coalesce((SELECT sum(octet_length(d.body)) FROM deliveries d
                           WHERE d.message_id = t.id AND d.body IS NOT NULL), 0) AS bytes
         FROM targets t),
     contents AS (
       UPDATE message_contents SET body = NULL, erased_at = $2
        WHERE message_id IN (SELECT id FROM targets) AND body IS NOT NULL),
     copies AS (
       UPDATE deliveries SET body = NULL WHERE message_id IN (SELECT id FROM targets) AND body IS NOT NULL),
     marked AS (
       UPDATE messages SET content_erased_at = $2, erase_txid = pg_current_xact_id()
        WHERE id IN (SELECT id FROM targets))
     SELECT team_id, sum(bytes)::text AS bytes FROM sizes GROUP BY team_id`,
    [messageIds, now],
  );
  for (const row of rows) freed.set(row.team_id, Number(row.bytes));
  await releaseContentBytes(tx, freed);
  return freed;
}
