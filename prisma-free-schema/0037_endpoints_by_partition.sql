-- Discovery reads the owned partitions only (docs/delivery.md, "Endpoint ownership"): a worker's backstop search for
-- endpoints with work walked every endpoint with a queued row, of every partition, and kept its own; with N workers
-- the deployment paid N whole walks. Now it reads its partitions' endpoints through this index and probes the queue
-- for each (its (endpoint_id, due_at) index). 32 is DISPATCH_PARTITIONS; the query names the same expression.
-- endpoints is configuration (rare writes), so the index costs the hot paths nothing.
CREATE INDEX endpoints_dispatch_partition_idx ON endpoints (svc_dispatch_partition(id, 32), id);
