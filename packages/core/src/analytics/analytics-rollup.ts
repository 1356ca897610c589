import type { DataSource, EntityManager } from 'typeorm';
import { DAY } from '../common/clock.js';
import { retryOnConflict } from '../common/transaction.js';

/** Facts folded per statement: a short transaction whatever the backlog. */
export const FOLD_BATCH = 5000;
/** Hourly rollups are kept this long; a window before that shows zeros. */
export const ANALYTICS_RETENTION_DAYS = 90;
const PURGE_BATCH = 5000;
/** At most this many purge batches per run: retention catches up over several runs rather than in one long one. */
const PURGE_BATCHES_PER_RUN = 10;

/**
 * Runs of the rollup (the job every ~20 s, tests calling it) take this lock for each of their short transactions,
 * so two runs never interleave: a run that returns has folded everything committed before it started.
 */
const LOCK = `SELECT pg_advisory_xact_lock(hashtextextended('analytics-rollup', 0))`;

/**
 * One batch of facts is deleted and added to the hourly rollups of every scope it counts for, in one statement:
 * the team, the tenant, the endpoint, the source (of the fact, or of its message) and each endpoint of an
 * admission's fan-out (which counts the message and one delivery). Rows are written in key order, as every run does.
 */
const FOLD = `
  WITH batch AS (
    DELETE FROM analytics_facts WHERE ctid = ANY (ARRAY(SELECT ctid FROM analytics_facts LIMIT $1))
    RETURNING *),
  resolved AS (
    SELECT b.team_id, b.tenant_id, b.endpoint_id, coalesce(b.source_id, m.source_id) AS source_id, b.fanout,
           date_trunc('hour', b.at, 'UTC') AS hour, b.admitted, b.ingest_bytes, b.deliveries, b.attempts,
           b.succeeded, b.failed, b.expired, b.canceled, b.duplicates, b.rejected_auth, b.throttled
      FROM batch b
      LEFT JOIN messages m ON b.source_id IS NULL AND b.message_id IS NOT NULL AND m.id = b.message_id),
  scoped AS (
    SELECT r.team_id, s.scope, s.scope_id, r.hour, r.admitted, r.ingest_bytes, r.deliveries, r.attempts,
           r.succeeded, r.failed, r.expired, r.canceled, r.duplicates, r.rejected_auth, r.throttled
      FROM resolved r
     CROSS JOIN LATERAL (VALUES ('team', r.team_id), ('tenant', r.tenant_id), ('endpoint', r.endpoint_id),
                                ('source', r.source_id)) AS s(scope, scope_id)
     WHERE s.scope_id IS NOT NULL
    UNION ALL
    SELECT r.team_id, 'endpoint', e.endpoint_id, r.hour, r.admitted, r.ingest_bytes, 1, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, NULL
      FROM resolved r CROSS JOIN LATERAL unnest(r.fanout) AS e(endpoint_id)),
  summed AS (
    INSERT INTO analytics_hourly AS h (scope, scope_id, hour, team_id, admitted_messages, ingest_bytes, deliveries,
                                       attempts, succeeded, failed, expired, canceled, duplicates, rejected_auth,
                                       throttled)
    SELECT scope, scope_id, hour, min(team_id), coalesce(sum(admitted), 0), coalesce(sum(ingest_bytes), 0),
           coalesce(sum(deliveries), 0), coalesce(sum(attempts), 0), coalesce(sum(succeeded), 0),
           coalesce(sum(failed), 0), coalesce(sum(expired), 0), coalesce(sum(canceled), 0),
           coalesce(sum(duplicates), 0), coalesce(sum(rejected_auth), 0), coalesce(sum(throttled), 0)
      FROM scoped
     GROUP BY scope, scope_id, hour
     ORDER BY scope, scope_id, hour
    ON CONFLICT (scope, scope_id, hour) DO UPDATE
      SET admitted_messages = h.admitted_messages + EXCLUDED.admitted_messages,
          ingest_bytes = h.ingest_bytes + EXCLUDED.ingest_bytes,
          deliveries = h.deliveries + EXCLUDED.deliveries,
          attempts = h.attempts + EXCLUDED.attempts,
          succeeded = h.succeeded + EXCLUDED.succeeded,
          failed = h.failed + EXCLUDED.failed,
          expired = h.expired + EXCLUDED.expired,
          canceled = h.canceled + EXCLUDED.canceled,
          duplicates = h.duplicates + EXCLUDED.duplicates,
          rejected_auth = h.rejected_auth + EXCLUDED.rejected_auth,
          throttled = h.throttled + EXCLUDED.throttled
    RETURNING 1)
  SELECT (SELECT count(*) FROM batch)::int AS facts, (SELECT count(*) FROM summed)::int AS rollups`;

/**
 * The queue gauges of every scope with pending deliveries ($1 is now, $2 its hour), written to the current hour's
 * rollups and to analytics_gauges (the latest sample), with zeros for scopes that had some at the previous sample:
 * - queue_depth: pending deliveries (queued, in_flight, retry_wait). Endpoints, tenants and teams from the
 *   endpoints' queue counters (no scan); sources by counting the pending deliveries of captured messages, looked at
 *   only for endpoints of tenants that have sources.
 * - oldest_due_age_seconds: how long each endpoint's oldest due queue row (its first entry in delivery_queue's
 *   (endpoint_id, due_at) index, found by a loose index scan: two probes per endpoint with rows) has been due;
 *   tenants and teams get their endpoints' oldest; a source the oldest due row among its captures' deliveries (read
 *   with its queue depth, only for endpoints of tenants that have sources).
 */
const SAMPLE = `
  WITH RECURSIVE walk(endpoint_id) AS (
    SELECT min(endpoint_id) FROM delivery_queue
    UNION ALL
    SELECT (SELECT min(q.endpoint_id) FROM delivery_queue q WHERE q.endpoint_id > w.endpoint_id)
      FROM walk w WHERE w.endpoint_id IS NOT NULL),
  endpoint_depth AS (
    SELECT e.team_id, e.tenant_id, q.endpoint_id, sum(q.pending) AS pending
      FROM endpoint_queue_counts q JOIN endpoints e ON e.id = q.endpoint_id
     GROUP BY e.team_id, e.tenant_id, q.endpoint_id
    HAVING sum(q.pending) > 0),
  captured AS (
    SELECT d.team_id, m.source_id, q.due_at
      FROM delivery_queue q JOIN deliveries d ON d.id = q.delivery_id JOIN messages m ON m.id = d.message_id
     WHERE m.source_id IS NOT NULL
       AND q.endpoint_id IN (SELECT e.id FROM endpoints e WHERE EXISTS (SELECT 1 FROM sources s
                                                                        WHERE s.tenant_id = e.tenant_id))),
  source_depth AS (
    SELECT team_id, source_id, count(*) AS pending,
           min(due_at) FILTER (WHERE due_at <= $1) AS oldest
      FROM captured GROUP BY team_id, source_id),
  due AS (
    SELECT e.team_id, e.tenant_id, e.id AS endpoint_id, o.due_at AS oldest
      FROM walk w
      CROSS JOIN LATERAL (SELECT q.due_at FROM delivery_queue q
                           WHERE q.endpoint_id = w.endpoint_id ORDER BY q.due_at LIMIT 1) o
      JOIN endpoints e ON e.id = w.endpoint_id
     WHERE w.endpoint_id IS NOT NULL AND o.due_at <= $1),
  sample AS (
    SELECT team_id, 'endpoint' AS scope, endpoint_id AS scope_id, pending, NULL::timestamptz AS oldest
      FROM endpoint_depth
    UNION ALL SELECT team_id, 'tenant', tenant_id, pending, NULL FROM endpoint_depth
    UNION ALL SELECT team_id, 'team', team_id, pending, NULL FROM endpoint_depth
    UNION ALL SELECT team_id, 'source', source_id, pending, oldest FROM source_depth
    UNION ALL
    SELECT d.team_id, s.scope, s.scope_id, 0, d.oldest
      FROM due d
     CROSS JOIN LATERAL (VALUES ('team', d.team_id), ('tenant', d.tenant_id), ('endpoint', d.endpoint_id))
                        AS s(scope, scope_id)),
  gauges AS (
    SELECT scope, scope_id, min(team_id) AS team_id, sum(pending)::bigint AS queue_depth, min(oldest) AS oldest_due_at
      FROM sample GROUP BY scope, scope_id),
  merged AS (
    SELECT coalesce(g.scope, p.scope) AS scope, coalesce(g.scope_id, p.scope_id) AS scope_id,
           coalesce(g.team_id, p.team_id) AS team_id, coalesce(g.queue_depth, 0) AS queue_depth,
           coalesce(floor(extract(epoch FROM $1::timestamptz - g.oldest_due_at)), 0) AS oldest_due_age_seconds
      FROM gauges g FULL JOIN analytics_gauges p ON p.scope = g.scope AND p.scope_id = g.scope_id),
  hourly AS (
    INSERT INTO analytics_hourly AS h (scope, scope_id, hour, team_id, queue_depth, oldest_due_age_seconds)
    SELECT scope, scope_id, $2::timestamptz, team_id, queue_depth, oldest_due_age_seconds
      FROM merged ORDER BY scope, scope_id
    ON CONFLICT (scope, scope_id, hour) DO UPDATE
      SET queue_depth = EXCLUDED.queue_depth, oldest_due_age_seconds = EXCLUDED.oldest_due_age_seconds),
  cleared AS (
    DELETE FROM analytics_gauges a
     WHERE NOT EXISTS (SELECT 1 FROM gauges g WHERE g.scope = a.scope AND g.scope_id = a.scope_id)),
  latest AS (
    INSERT INTO analytics_gauges AS a (scope, scope_id, team_id, queue_depth, oldest_due_at, sampled_at)
    SELECT scope, scope_id, team_id, queue_depth, oldest_due_at, $1 FROM gauges ORDER BY scope, scope_id
    ON CONFLICT (scope, scope_id) DO UPDATE
      SET queue_depth = EXCLUDED.queue_depth, oldest_due_at = EXCLUDED.oldest_due_at,
          sampled_at = EXCLUDED.sampled_at)
  SELECT count(*)::int AS scopes FROM gauges`;

const PURGE = `
  DELETE FROM analytics_hourly
   WHERE ctid = ANY (ARRAY(SELECT ctid FROM analytics_hourly WHERE hour < $1 LIMIT $2))`;

export interface RollupReport {
  /** Facts folded into the hourly rollups. */
  facts: number;
  /** Scopes with pending deliveries at the sample. */
  sampledScopes: number;
  /** Hourly rollups past retention deleted. */
  purged: number;
}

function locked<T>(db: DataSource, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return retryOnConflict(() =>
    db.transaction(async (tx) => {
      await tx.query(LOCK);
      return work(tx);
    }),
  );
}

/** Folds every committed fact into the hourly rollups, a batch per short transaction. */
export async function foldFacts(db: DataSource, batchSize = FOLD_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const [row]: { facts: number }[] = await locked(db, (tx) => tx.query(FOLD, [batchSize]));
    total += row!.facts;
    if (row!.facts < batchSize) return total;
  }
}

/** Samples the queue gauges into the hour of `now` and the latest-sample table. */
export async function sampleGauges(db: DataSource, now: Date, hour: Date): Promise<number> {
  const [row]: { scopes: number }[] = await locked(db, (tx) => tx.query(SAMPLE, [now, hour]));
  return row!.scopes;
}

/** Deletes hourly rollups older than the retention, a bounded number of batches per run. */
export async function purgeRollups(db: DataSource, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - ANALYTICS_RETENTION_DAYS * DAY);
  let total = 0;
  for (let i = 0; i < PURGE_BATCHES_PER_RUN; i += 1) {
    // TypeORM answers a DELETE with [rows, count].
    const [, count]: [unknown[], number] = await db.query(PURGE, [cutoff, PURGE_BATCH]);
    total += count;
    if (count < PURGE_BATCH) break;
  }
  return total;
}
