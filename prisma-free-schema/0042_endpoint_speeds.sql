-- What the delivery engine learnt of each endpoint's answer time (docs/delivery.md, "Fairness"). A worker classes an
-- endpoint fast or slow from its attempts; the class decides whether its lane may take the last free slots. It was
-- kept in the worker's memory only, so after a partition moved (every deploy, every worker that joins or leaves) the
-- new owner knew no endpoint's speed: a fast endpoint's lane of unknown speed may not take the last slot and waited
-- for slow attempts to end. Workers write an endpoint's mean here when its class changes (or is first learnt), at
-- most once a second in one statement, and read their partitions' rows when they gain them.
CREATE TABLE endpoint_speeds (
  endpoint_id text PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
  mean_ms integer NOT NULL CHECK (mean_ms >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
