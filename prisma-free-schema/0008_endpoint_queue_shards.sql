-- An endpoint's pending count is spread over shard rows like the team's: admission writes its slot's shard (0 to
-- 3), settlement one of 4 to 7, so admissions never wait for a settlement's row lock on the same counter (the
-- benchmark measured exactly that wait). queued_count is the sum of an endpoint's shards.
ALTER TABLE endpoint_queue_counts ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE endpoint_queue_counts DROP CONSTRAINT endpoint_queue_counts_pkey;
ALTER TABLE endpoint_queue_counts ADD PRIMARY KEY (endpoint_id, shard);
