-- Analytics (docs/analytics.md): counters per team, tenant, endpoint and source per UTC hour, kept up to date from
-- facts the transitions append inside statements they already make, and folded in by the analytics rollup job.

-- What happened, one row per transition batch: an admission (with the endpoints it fanned out to), an attempt, a
-- finished delivery, a duplicate or refused capture, a throttled request. No key and no index, so an append is one
-- heap write in a statement the hot path already sends. The rollup job takes rows in batches, adds them to
-- analytics_hourly and deletes them in the same statement: a row is folded exactly once, when its transaction has
-- committed (a row of a running transaction is invisible, so it waits for the next run). Counters are NULL when
-- zero, which costs nothing on disk.
CREATE TABLE analytics_facts (
  team_id       text NOT NULL,
  tenant_id     text,
  endpoint_id   text,
  source_id     text,
  -- The message of a delivery or attempt: its source (if any) is looked up when the fact is folded, off the hot path.
  message_id    text,
  -- Admission: the endpoints the message fanned out to. Each of them counts the message and one delivery.
  fanout        text[],
  -- When the transition happened (the service clock): the hour it counts in.
  at            timestamptz NOT NULL,
  admitted      integer,
  ingest_bytes  bigint,
  deliveries    integer,
  attempts      integer,
  succeeded     integer,
  failed        integer,
  expired       integer,
  canceled      integer,
  duplicates    integer,
  rejected_auth integer,
  throttled     integer
);
-- A queue-like table: rows live for seconds. Vacuum it often so the rollup's scans stay short.
ALTER TABLE analytics_facts SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
                                 autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);

-- The rollups: one row per scope (the team, a tenant, an endpoint or a source) and UTC hour with activity. scope_id
-- is the team's, tenant's, endpoint's or source's ID. queue_depth and oldest_due_age_seconds are the last sample the
-- rollup job took in that hour (about the value at its end).
CREATE TABLE analytics_hourly (
  scope                  text NOT NULL CHECK (scope IN ('team', 'tenant', 'endpoint', 'source')),
  scope_id               text NOT NULL,
  hour                   timestamptz NOT NULL,
  team_id                text NOT NULL,
  admitted_messages      bigint NOT NULL DEFAULT 0,
  ingest_bytes           bigint NOT NULL DEFAULT 0,
  deliveries             bigint NOT NULL DEFAULT 0,
  attempts               bigint NOT NULL DEFAULT 0,
  succeeded              bigint NOT NULL DEFAULT 0,
  failed                 bigint NOT NULL DEFAULT 0,
  expired                bigint NOT NULL DEFAULT 0,
  canceled               bigint NOT NULL DEFAULT 0,
  duplicates             bigint NOT NULL DEFAULT 0,
  rejected_auth          bigint NOT NULL DEFAULT 0,
  throttled              bigint NOT NULL DEFAULT 0,
  queue_depth            bigint NOT NULL DEFAULT 0,
  oldest_due_age_seconds bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, scope_id, hour)
);
-- Retention: rollups older than ANALYTICS_RETENTION_DAYS are deleted in batches by the rollup job.
CREATE INDEX analytics_hourly_hour_idx ON analytics_hourly (hour);

-- The latest sample of each scope with pending deliveries: the response's current queue_depth and
-- oldest_due_age_seconds. A scope without a row has none.
CREATE TABLE analytics_gauges (
  scope         text NOT NULL,
  scope_id      text NOT NULL,
  team_id       text NOT NULL,
  queue_depth   bigint NOT NULL,
  -- The next_attempt_at of the oldest delivery that was due and waiting (queued or retry_wait) at the sample.
  oldest_due_at timestamptz,
  sampled_at    timestamptz NOT NULL,
  PRIMARY KEY (scope, scope_id)
);
