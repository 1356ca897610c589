-- Operational events (GET /events): what went wrong or right with deliveries, endpoints, sources and replays, kept
-- 30 days. Bursts coalesce: an occurrence of the same team, type and coalescing key (the endpoint for delivery
-- events, else the resource) less than 60 seconds after an open event's first occurrence is folded into it
-- (docs/events.md). The feed pages by (txid, id) below pg_snapshot_xmin, like the other feeds (0005_messages.sql).

CREATE TABLE operational_events (
  id               text PRIMARY KEY,
  team_id          text NOT NULL REFERENCES teams(id),
  tenant_id        text NOT NULL,
  type             text NOT NULL CHECK (type IN (
                     'webhooks.delivery.failed', 'webhooks.delivery.expired', 'webhooks.endpoint.disabled',
                     'webhooks.endpoint.recovered', 'webhooks.source.rejected', 'webhooks.replay.completed',
                     'webhooks.replay.failed', 'webhooks.budget.blocked')),
  -- The resource of the first occurrence; first_id equals it and last_id names the last folded occurrence's.
  resource_id      text NOT NULL,
  resource_version text NOT NULL,
  data             jsonb NOT NULL,
  coalesced        boolean NOT NULL DEFAULT false,
  count            integer NOT NULL DEFAULT 1 CHECK (count >= 1),
  first_id         text NOT NULL,
  last_id          text NOT NULL,
  -- What bursts fold by, and the window: open until the next occurrence finds it over (then closed for good).
  coalesce_key     text NOT NULL,
  window_open      boolean NOT NULL DEFAULT true,
  window_ends_at   timestamptz NOT NULL,
  created_at       timestamptz NOT NULL,
  last_occurred_at timestamptz NOT NULL,
  -- The writing transaction (moved forward by each fold, so a poller sees the grown count again).
  txid             xid8 NOT NULL DEFAULT pg_current_xact_id()
);
-- At most one open window per team, type and key: concurrent emitters of a burst fold into one row (ON CONFLICT).
CREATE UNIQUE INDEX operational_events_open_window_idx ON operational_events (team_id, type, coalesce_key)
  WHERE window_open;
CREATE INDEX operational_events_team_feed_idx ON operational_events (team_id, txid, id);
CREATE INDEX operational_events_resource_idx ON operational_events (team_id, resource_id);
CREATE INDEX operational_events_last_idx ON operational_events (team_id, last_id) WHERE coalesced;
-- Retention deletes by age in small batches.
CREATE INDEX operational_events_created_idx ON operational_events (created_at);

-- /metrics: the oldest due delivery (svc_oldest_due_age_seconds) is the first entry of this index.
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status IN ('queued', 'retry_wait');
