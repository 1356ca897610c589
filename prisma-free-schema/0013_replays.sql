-- Bulk replays: one endpoint's dead letters (failed and expired deliveries) of a window replayed as new delivery
-- generations in batches, each batch charged as it is created, bounded by max_cost and the key's spending limit
-- (docs/replays.md).

CREATE TABLE replays (
  id              text PRIMARY KEY,
  team_id         text NOT NULL REFERENCES teams(id),
  endpoint_id     text NOT NULL REFERENCES endpoints(id),
  tenant_id       text NOT NULL,
  event_type      text,
  window_after    timestamptz NOT NULL,
  window_before   timestamptz NOT NULL,
  max_cost_micros bigint CHECK (max_cost_micros IS NULL OR max_cost_micros >= 0),
  paying_key_id   text NOT NULL REFERENCES api_keys(id),
  status          text NOT NULL CHECK (status IN ('running', 'delivering', 'completed', 'failed', 'canceled')),
  reason          text,
  -- At start: dead letters matched, those whose content can still be sent, and their delivery units.
  matched         integer NOT NULL,
  estimate_deliveries integer NOT NULL,
  estimate_units  bigint NOT NULL,
  created_count   integer NOT NULL DEFAULT 0,
  skipped         integer NOT NULL DEFAULT 0,
  cost_micros     bigint NOT NULL DEFAULT 0,
  succeeded       integer NOT NULL DEFAULT 0,
  failed          integer NOT NULL DEFAULT 0,
  -- Where the next batch starts: the last dead letter looked at, by (created_at, id).
  cursor_created_at timestamptz,
  cursor_id       text,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  finished_at     timestamptz
);
CREATE INDEX replays_team_idx ON replays (team_id, id);
CREATE INDEX replays_active_idx ON replays (team_id) WHERE status IN ('running', 'delivering');

-- A replay's generations, for its progress and completion.
CREATE INDEX deliveries_replay_idx ON deliveries (replay_id) WHERE replay_id IS NOT NULL;
