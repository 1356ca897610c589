import { endpointsWithStrayRows, numberWaiting } from '../deliveries/ordering.js';
import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import { retryOnConflict } from '../common/transaction.js';
import { wakeEndpoints } from './wake-endpoints.js';
import {
  cancelWaitingDeliveries,
  FINISHED_ROW_COLUMNS,
  finishedFromRows,
  recordFinished,
  type EngineEventSink,
  type FinishedRow,
} from '../deliveries/delivery-records.js';
import { DISPATCH_PARTITIONS } from './dispatch-partitions.js';

export interface OwnershipSettings {
  /** How long a partition lease lasts; the owner renews it with every heartbeat. */
  leaseSeconds: number;
  /** A worker whose heartbeat is older than this is dead: its partitions and its leases move. */
  deadAfterSeconds: number;
}

export const DEFAULT_OWNERSHIP: OwnershipSettings = { leaseSeconds: 5, deadAfterSeconds: 5 };

export interface Membership {
  /** The partitions this worker owns until its next heartbeat. */
  partitions: number[];
  /** Live workers, this one included: the deployment-wide limits are shared among them. */
  liveWorkers: number;
}

/**
 * The endpoints of these partitions with something queued, and their earliest due time: the partitions' endpoints
 * through endpoints_dispatch_partition_idx (0037), one probe of the queue's (endpoint_id, due_at) index each. Its
 * cost grows with the partitions' endpoints, not with every endpoint that has work anywhere.
 */
export const DISCOVERY_SQL = `
SELECT e.id AS endpoint_id, n.due_at AS next_due_at
  FROM endpoints e
  CROSS JOIN LATERAL (SELECT min(q.due_at) AS due_at FROM delivery_queue q WHERE q.endpoint_id = e.id) n
 WHERE svc_dispatch_partition(e.id, ${DISPATCH_PARTITIONS}) = ANY ($1::int[]) AND n.due_at IS NOT NULL
   -- Stream endpoints' deliveries are fetched by their receivers (packages/core/src/streams/), never POSTed.
   AND e.delivery_mode = 'push'`;

/**
 * Endpoint ownership (docs/delivery.md). Every worker beats once a second; the beat renews its partition leases and
 * takes free or lapsed partitions up to its fair share (all partitions over the live workers), releasing the rest,
 * so partitions spread evenly and a dead worker's move within its lease. Membership times are the database's
 * clock (they are about processes, not about deliveries); due times stay on the service clock.
 */
export class DispatchOwnershipService {
  constructor(
    private readonly deps: { db: DataSource; clock: Clock; events: EngineEventSink },
    private readonly settings: OwnershipSettings = DEFAULT_OWNERSHIP,
  ) {}

  async heartbeat(workerId: string): Promise<Membership> {
    const rows: { partitions: number[] | null; live: number }[] = await retryOnConflict(() =>
      this.deps.db.query(
        `WITH beat AS (
           INSERT INTO dispatch_workers (id, started_at, heartbeat_at) VALUES ($1, now(), now())
           ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()),
         live AS (
           SELECT 1 + count(*) FILTER (WHERE id <> $1)::int AS n FROM dispatch_workers
            WHERE heartbeat_at > now() - make_interval(secs => $2::float8)),
         slots AS (INSERT INTO dispatch_slots (worker_id) VALUES ($1) ON CONFLICT (worker_id) DO NOTHING),
         -- Its own partitions are renewed without a lock of their own: a claim holds them FOR KEY SHARE, which an
         -- UPDATE of the lease does not wait for, and a row another claim holds is never skipped and given away.
         free AS (
           SELECT partition FROM dispatch_partitions
            WHERE (owner IS NULL OR lease_until < now()) AND owner IS DISTINCT FROM $1
            ORDER BY partition FOR UPDATE SKIP LOCKED),
         candidates AS (
           SELECT partition, true AS mine FROM dispatch_partitions WHERE owner = $1
           UNION ALL SELECT partition, false FROM free),
         pick AS (
           SELECT partition FROM candidates ORDER BY mine DESC, partition
            LIMIT (SELECT ceil($3::float8 / n)::int FROM live)),
         take AS (
           UPDATE dispatch_partitions p SET owner = $1, lease_until = now() + make_interval(secs => $4::float8)
             FROM pick WHERE p.partition = pick.partition
              -- Rechecked on the newest row: a lapsed lease of this worker that another took meanwhile stays theirs.
              AND (p.owner = $1 OR p.owner IS NULL OR p.lease_until < now())
           RETURNING p.partition),
         give AS (
           UPDATE dispatch_partitions p SET owner = NULL, lease_until = NULL
            WHERE p.owner = $1 AND NOT EXISTS (SELECT 1 FROM pick WHERE pick.partition = p.partition)
           RETURNING p.partition)
         SELECT (SELECT array_agg(partition ORDER BY partition) FROM take) AS partitions,
                (SELECT n FROM live) AS live, (SELECT count(*) FROM give) AS released`,
        [workerId, this.settings.deadAfterSeconds, DISPATCH_PARTITIONS, this.settings.leaseSeconds],
      ),
    );
    const row = rows[0]!;
    return { partitions: row.partitions ?? [], liveWorkers: row.live };
  }

  /** A worker that stops: its partitions are free at once and its row goes (its leases, if any, become orphans). */
  async leave(workerId: string): Promise<void> {
    await this.deps.db.query(
      `WITH free AS (UPDATE dispatch_partitions SET owner = NULL, lease_until = NULL WHERE owner = $1),
            slots AS (DELETE FROM dispatch_slots WHERE worker_id = $1)
       DELETE FROM dispatch_workers WHERE id = $1`,
      [workerId],
    );
  }

  /**
   * Rows held by workers that are gone (killed, or stopped with attempts unsettled) become due now, so a crash
   * delays its deliveries by a heartbeat or two instead of a whole lease; their owners are woken. Workers gone for
   * an hour are forgotten.
   */
  async releaseOrphans(): Promise<string[]> {
    const now = this.deps.clock.now();
    const rows: { endpoint_id: string }[] = await this.deps.db.query(
      `WITH alive AS (
         SELECT id FROM dispatch_workers WHERE heartbeat_at > now() - make_interval(secs => $2::float8)),
       freed AS (
         UPDATE delivery_queue q SET due_at = $1, lease_owner = NULL
          WHERE q.lease_owner IS NOT NULL AND q.lease_owner NOT IN (SELECT id FROM alive)
            -- Stream connections' leases (wdc_...) are released by the stream sweep, which knows live connections.
            AND q.lease_owner NOT LIKE 'wdc\\_%'
         RETURNING q.endpoint_id),
       forgotten AS (DELETE FROM dispatch_workers WHERE heartbeat_at < now() - interval '1 hour' RETURNING id),
       forgotten_slots AS (DELETE FROM dispatch_slots s WHERE s.worker_id IN (SELECT id FROM forgotten))
       SELECT DISTINCT endpoint_id FROM freed`,
      [now, this.settings.deadAfterSeconds],
    );
    const endpoints = rows.map((r) => r.endpoint_id);
    if (endpoints.length > 0) wakeEndpoints(this.deps.db, endpoints);
    return endpoints;
  }

  /**
   * Every endpoint with rows in the queue in the given partitions, with its earliest due time: a loose index scan
   * over the queue's (endpoint_id, due_at) index, two probes per endpoint whatever the number of rows.
   */
  async discover(partitions: readonly number[]): Promise<{ endpointId: string; nextDueAt: Date }[]> {
    if (partitions.length === 0) return [];
    const rows: { endpoint_id: string; next_due_at: Date }[] = await this.deps.db.query(DISCOVERY_SQL, [partitions]);
    return rows.map((r) => ({ endpointId: r.endpoint_id, nextDueAt: r.next_due_at }));
  }

  /**
   * Deliveries whose window ended and that no attempt holds become expired, whether or not a claim ever reaches
   * them (an endpoint paused or behind an open circuit): a batch per call, oldest first.
   */
  async expireDue(limit = 1000): Promise<number> {
    const now = this.deps.clock.now();
    return retryOnConflict(() =>
      this.deps.db.transaction(async (tx) => {
        const [rows]: [FinishedRow[], number] = await tx.query(
          `WITH gone AS (
             DELETE FROM delivery_queue q
              WHERE q.delivery_id IN (
                SELECT delivery_id FROM delivery_queue
                 WHERE expires_at <= $1 AND lease_owner IS NULL
                 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
             RETURNING q.delivery_id)
           UPDATE deliveries d
              SET status = 'expired', last_error = 'window_over', lease_expires_at = NULL, finished_at = $1,
                  updated_at = $1
             FROM gone WHERE d.id = gone.delivery_id AND d.status IN ('queued', 'retry_wait', 'in_flight')
           -- On an ordered endpoint, the head is the lowest number waiting (the statement's snapshot still shows
           -- the rows it deletes, so of several expiring at once only the lowest is).
           RETURNING ${FINISHED_ROW_COLUMNS},
                     d.sequence IS NOT NULL AND NOT EXISTS (
                       SELECT 1 FROM delivery_queue o
                        WHERE o.endpoint_id = d.endpoint_id AND o.sequence IS NOT NULL AND o.sequence < d.sequence)
                       AS was_head`,
          [now, limit],
        );
        await recordFinished(tx, finishedFromRows(rows, 'expired', 'window_over'), this.deps.events, now);
        return rows.length;
      }),
    );
  }

  /**
   * Cancels the waiting deliveries of endpoints the service disabled (410, an unsafe destination), in transactions of
   * `batch` rows each, so a backlog of 100,000 never rides in one transaction, a settlement or the engine's memory.
   * Without `endpointIds`: of every disabled endpoint that still has waiting rows (the reconciliation sweep, for a
   * process that stopped half-way). Returns how many were canceled.
   */
  async cancelDisabledBacklogs(endpointIds?: readonly string[], batch = 1000): Promise<number> {
    const ids =
      endpointIds ??
      (
        (await this.deps.db.query(
          `SELECT e.id FROM endpoints e
            WHERE e.status = 'disabled' AND e.deleted_at IS NULL
              AND EXISTS (SELECT 1 FROM delivery_queue q WHERE q.endpoint_id = e.id AND q.lease_owner IS NULL)
            LIMIT 100`,
        )) as { id: string }[]
      ).map((r) => r.id);
    let canceled = 0;
    if (ids.length === 0) return 0;
    for (;;) {
      const n = await retryOnConflict(() =>
        this.deps.db.transaction(async (tx) => {
          // Only while the endpoint is still disabled: resumed meanwhile, its waiting deliveries go on.
          const [row]: { still: string[] | null }[] = await tx.query(
            `SELECT array_agg(id) AS still FROM endpoints WHERE id = ANY($1::text[]) AND status = 'disabled'`,
            [ids],
          );
          const still = row?.still ?? [];
          if (still.length === 0) return 0;
          return cancelWaitingDeliveries(tx, { endpointIds: still }, 'endpoint_disabled', this.deps.clock.now(), batch);
        }),
      );
      canceled += n;
      if (n < batch) return canceled;
    }
  }

  /**
   * Numbers the waiting deliveries of ordered endpoints that have none: admitted by a transaction that read the
   * endpoint before ordering was switched on (deliveries/ordering.ts). Until then the claim leaves them waiting.
   */
  async numberStrayRows(): Promise<number> {
    return retryOnConflict(() =>
      this.deps.db.transaction(async (tx) => {
        const now = this.deps.clock.now();
        const endpoints = await endpointsWithStrayRows(tx, now);
        return endpoints.length === 0 ? 0 : numberWaiting(tx, endpoints, now);
      }),
    );
  }

  /**
   * The safety net: endpoints whose pending counters say more than their queue rows hold have a pending delivery
   * that lost its row (a bug, a manual change); those deliveries get their row back, due now, and their owners
   * are woken. Counting the queue per endpoint reads the queue's index once.
   */
  async restoreLostRows(): Promise<number> {
    const now = this.deps.clock.now();
    const suspects: { endpoint_id: string }[] = await this.deps.db.query(
      `SELECT c.endpoint_id
         FROM (SELECT endpoint_id, sum(pending) AS pending FROM endpoint_queue_counts GROUP BY endpoint_id) c
         LEFT JOIN (SELECT endpoint_id, count(*) AS n FROM delivery_queue GROUP BY endpoint_id) q
           ON q.endpoint_id = c.endpoint_id
        WHERE c.pending > coalesce(q.n, 0)
        LIMIT 100`,
    );
    if (suspects.length === 0) return 0;
    const endpoints = suspects.map((s) => s.endpoint_id);
    const restored: { endpoint_id: string }[] = await this.deps.db.query(
      `INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at, attempt, sequence)
       SELECT d.id, d.endpoint_id, CASE WHEN d.status = 'in_flight' THEN $2 ELSE d.next_attempt_at END,
              d.expires_at, d.attempt_count, d.sequence
         FROM deliveries d
        WHERE d.endpoint_id = ANY($1::text[]) AND d.status IN ('queued', 'retry_wait', 'in_flight')
          AND NOT EXISTS (SELECT 1 FROM delivery_queue q WHERE q.delivery_id = d.id)
       ON CONFLICT (delivery_id) DO NOTHING
       RETURNING endpoint_id`,
      [endpoints, now],
    );
    wakeEndpoints(
      this.deps.db,
      restored.map((r) => r.endpoint_id),
    );
    return restored.length;
  }
}
