-- Messages, their content, one delivery per message x endpoint, one row per attempt, and the engine's per-endpoint
-- state. Feeds (GET /messages, /deliveries, /events) page by (txid, id): the writing transaction's ID, read only
-- below the oldest running transaction (pg_snapshot_xmin), so a late commit is never skipped (docs/delivery.md).

CREATE TABLE messages (
  id               text PRIMARY KEY,
  team_id          text NOT NULL REFERENCES teams(id),
  tenant_id        text NOT NULL REFERENCES tenants(id),
  event_type       text NOT NULL,
  external_id      text,
  origin           text NOT NULL CHECK (origin IN ('api', 'test', 'source')),
  source_id        text,
  content_type     text NOT NULL,
  body_bytes       integer NOT NULL,
  body_sha256      text NOT NULL,
  deliver_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  retained_until   timestamptz NOT NULL,
  redacted_at      timestamptz,
  redaction_status text CHECK (redaction_status IN ('redacting', 'complete')),
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  paying_key_id    text NOT NULL REFERENCES api_keys(id),
  ingest_units     integer NOT NULL,
  delivery_units   integer NOT NULL,
  price_micros     bigint NOT NULL,
  rate_version     text NOT NULL,
  created_at       timestamptz NOT NULL,
  txid             xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX messages_team_feed_idx ON messages (team_id, txid, id);
CREATE INDEX messages_team_created_idx ON messages (team_id, created_at, id);

-- The accepted bytes, apart from the metadata so retention and redaction erase them with a cheap update.
CREATE TABLE message_contents (
  message_id text PRIMARY KEY REFERENCES messages(id),
  team_id    text NOT NULL,
  body       bytea,
  erased_at  timestamptz
);

CREATE TABLE deliveries (
  id               text PRIMARY KEY,
  team_id          text NOT NULL REFERENCES teams(id),
  tenant_id        text NOT NULL,
  message_id       text NOT NULL REFERENCES messages(id),
  endpoint_id      text NOT NULL REFERENCES endpoints(id),
  event_type       text NOT NULL,
  generation       integer NOT NULL DEFAULT 0,
  replay_of        text,
  status           text NOT NULL
                   CHECK (status IN ('queued', 'in_flight', 'retry_wait', 'succeeded', 'failed', 'expired', 'canceled')),
  attempt_count    integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  next_trigger     text NOT NULL DEFAULT 'scheduled' CHECK (next_trigger IN ('scheduled', 'retry', 'probe', 'retry_now')),
  lease_expires_at timestamptz,
  cancel_retries   boolean NOT NULL DEFAULT false,
  expires_at       timestamptz NOT NULL,
  -- The frozen bytes when a transform changed them; NULL means the message content as accepted.
  body             bytea,
  body_bytes       integer NOT NULL,
  content_type     text NOT NULL,
  delivery_units   integer NOT NULL,
  last_status_code integer,
  last_error       text,
  last_attempt_at  timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  finished_at      timestamptz,
  txid             xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX deliveries_message_idx ON deliveries (message_id, generation);
CREATE INDEX deliveries_endpoint_active_idx ON deliveries (endpoint_id, status)
  WHERE status IN ('queued', 'in_flight', 'retry_wait');
CREATE INDEX deliveries_team_feed_idx ON deliveries (team_id, txid, id);

CREATE TABLE attempts (
  id            text PRIMARY KEY,
  delivery_id   text NOT NULL REFERENCES deliveries(id),
  team_id       text NOT NULL,
  endpoint_id   text NOT NULL,
  number        integer NOT NULL,
  trigger       text NOT NULL CHECK (trigger IN ('scheduled', 'retry', 'probe', 'retry_now')),
  started_at    timestamptz NOT NULL,
  duration_ms   integer NOT NULL,
  url_revision  bigint NOT NULL,
  status_code   integer,
  error_kind    text,
  response_body bytea,
  created_at    timestamptz NOT NULL
);
CREATE INDEX attempts_delivery_idx ON attempts (delivery_id, number);

-- What the engine writes per attempt, apart from the configuration row so a PATCH never contends with it.
CREATE TABLE endpoint_health (
  endpoint_id          text PRIMARY KEY REFERENCES endpoints(id),
  circuit              text NOT NULL DEFAULT 'closed' CHECK (circuit IN ('closed', 'half_open', 'open')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_success_at      timestamptz,
  last_failure_at      timestamptz,
  next_probe_at        timestamptz,
  probe_wait_seconds   integer NOT NULL DEFAULT 60,
  rate_tokens          double precision,
  rate_updated_at      timestamptz
);
INSERT INTO endpoint_health (endpoint_id, circuit, consecutive_failures, last_success_at, last_failure_at, next_probe_at)
  SELECT id, circuit, consecutive_failures, last_success_at, last_failure_at, next_probe_at FROM endpoints;

-- Waiting deliveries per endpoint (queued_count), kept with the transitions so a list never counts rows.
CREATE TABLE endpoint_queue_counts (
  endpoint_id text PRIMARY KEY REFERENCES endpoints(id),
  pending     bigint NOT NULL DEFAULT 0
);
INSERT INTO endpoint_queue_counts (endpoint_id) SELECT id FROM endpoints;

-- A team's pending deliveries and stored content bytes, for queue_full. Spread over shards so admissions of one
-- team never queue behind one hot row; the limit check sums the shards.
CREATE TABLE team_queue_counts (
  team_id       text NOT NULL REFERENCES teams(id),
  shard         smallint NOT NULL,
  pending       bigint NOT NULL DEFAULT 0,
  content_bytes bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (team_id, shard)
);
