-- Statistics of the partitioned parents (docs/retention.md, "Statistics"). Autovacuum analyses each partition, never
-- a partitioned parent: the planner's estimates for a whole table (a join to messages, a list over every day) had no
-- statistics of their own. The partition maintenance analyses each parent once a day and notes when here.
ALTER TABLE time_partitioned_tables ADD COLUMN IF NOT EXISTS analyzed_at timestamptz;
