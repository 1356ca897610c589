-- The delivery engine's own queue (docs/delivery.md, "The engine"). A pending webhook delivery has exactly one
-- narrow row here from admission (same transaction) until it finishes; the wide `deliveries` row is the record.
-- due_at is when the row may next be claimed: the delivery's due time while it waits, the lease's end while an
-- attempt holds it (so a lease that lapses makes the row due again without any job). lease_owner names the
-- worker holding it; attempt is the attempt number of the current or last lease, the fence of settlement.
CREATE TABLE delivery_queue (
  delivery_id  text PRIMARY KEY,
  endpoint_id  text NOT NULL,
  due_at       timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  lease_owner  text,
  attempt      integer NOT NULL DEFAULT 0
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02,
        autovacuum_analyze_scale_factor = 0.05, autovacuum_vacuum_cost_delay = 0);
-- An owner claims an endpoint's due rows oldest first; the next due time of an endpoint is its first entry.
CREATE INDEX delivery_queue_endpoint_due_idx ON delivery_queue (endpoint_id, due_at);
-- Expiry runs on time even for deliveries no claim ever reaches (an endpoint paused or behind an open circuit).
CREATE INDEX delivery_queue_expiry_idx ON delivery_queue (expires_at);
-- Rows in flight: other workers' leases count against an endpoint's max_concurrency; a dead worker's are freed.
CREATE INDEX delivery_queue_leased_idx ON delivery_queue (endpoint_id) WHERE lease_owner IS NOT NULL;

-- The partition of an endpoint: which worker owns it (dispatch_partitions). The same function in
-- packages/core/src/engine/dispatch-partitions.ts.
CREATE FUNCTION svc_dispatch_partition(endpoint_id text, partitions integer) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT (('x' || substr(md5(endpoint_id), 1, 8))::bit(32)::bigint % partitions)::integer $$;

-- Live worker processes (a heartbeat every second); a worker missing its heartbeat for a few seconds is dead and
-- its partitions and leases move.
CREATE TABLE dispatch_workers (
  id           text PRIMARY KEY,
  started_at   timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL
);

-- Endpoint ownership: endpoints are spread over a fixed number of partitions; each partition has one owner at a
-- time under a short lease renewed with the heartbeat. The owner enforces its endpoints' limits in memory.
CREATE TABLE dispatch_partitions (
  partition   smallint PRIMARY KEY,
  owner       text,
  lease_until timestamptz
);
INSERT INTO dispatch_partitions (partition) SELECT generate_series(0, 31);

-- Every pending delivery gets its queue row; one in flight becomes due at once (its old job model is gone).
INSERT INTO delivery_queue (delivery_id, endpoint_id, due_at, expires_at, attempt)
SELECT id, endpoint_id, CASE WHEN status = 'in_flight' THEN now() ELSE next_attempt_at END, expires_at, attempt_count
  FROM deliveries WHERE status IN ('queued', 'retry_wait', 'in_flight');
UPDATE deliveries SET status = 'queued', lease_expires_at = NULL WHERE status = 'in_flight';

-- The queue answers "what is due"; these indexes only slowed every delivery update (none of them is HOT).
DROP INDEX deliveries_due_idx;
DROP INDEX deliveries_endpoint_active_idx;
-- Old per-delivery jobs are not read any more.
DO $$ BEGIN
  IF to_regclass('pgboss.job') IS NOT NULL THEN
    DELETE FROM pgboss.job WHERE name = 'delivery.attempt';
  END IF;
END $$;
