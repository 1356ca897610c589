-- The platform API (spec/event-subscriptions.md, docs/platform.md): feature-flag environments and flags, the
-- events their changes write, event subscriptions and their ordered, signed deliveries.

-- A key restricted by the admin CLI administers only these environments; NULL: every environment of its team.
ALTER TABLE api_keys ADD COLUMN environment_ids text[];

CREATE TABLE feature_flag_environments (
  id         text PRIMARY KEY,
  team_id    text NOT NULL REFERENCES teams(id),
  name       text NOT NULL,
  -- Raised by every committed change of one of its flags; events carry it.
  revision   bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX feature_flag_environments_name_idx ON feature_flag_environments (team_id, lower(name));
CREATE INDEX feature_flag_environments_team_idx ON feature_flag_environments (team_id, id);

CREATE TABLE feature_flags (
  environment_id text NOT NULL REFERENCES feature_flag_environments(id),
  key            text NOT NULL,
  team_id        text NOT NULL REFERENCES teams(id),
  enabled        boolean NOT NULL,
  description    text NOT NULL DEFAULT '',
  -- The value served when enabled, as the exact (minified) JSON text the operator sent.
  value          text NOT NULL DEFAULT 'null',
  version        bigint NOT NULL DEFAULT 1,
  -- The environment revision of the flag's last change.
  revision       bigint NOT NULL,
  created_by     text NOT NULL,
  updated_by     text NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (environment_id, key)
);

-- Platform events (evt_): written in the transaction of the change they describe; kept 30 days.
CREATE TABLE platform_events (
  id             text PRIMARY KEY,
  team_id        text NOT NULL REFERENCES teams(id),
  type           text NOT NULL,
  environment_id text,
  revision       bigint,
  data           jsonb NOT NULL,
  created_at     timestamptz NOT NULL
);
CREATE INDEX platform_events_team_idx ON platform_events (team_id, id DESC);
CREATE INDEX platform_events_created_idx ON platform_events (created_at);

CREATE TABLE event_subscriptions (
  id                      text PRIMARY KEY,
  team_id                 text NOT NULL REFERENCES teams(id),
  url                     text NOT NULL,
  events                  text[] NOT NULL,
  environment_ids         text[] NOT NULL,
  description             text NOT NULL DEFAULT '',
  format                  text NOT NULL CHECK (format IN ('svc', 'chat_a', 'chat_b', 'chat_c')),
  enabled                 boolean NOT NULL DEFAULT true,
  disabled_reason         text,
  version                 bigint NOT NULL DEFAULT 1,
  -- The current secret and, during a rotation overlap, the previous one; sealed.
  secret_sealed           bytea NOT NULL,
  secret_version          integer NOT NULL DEFAULT 1,
  secret_created_by       text NOT NULL,
  previous_secret_sealed  bytea,
  previous_secret_version integer,
  secret_rotation_ends_at timestamptz,
  -- The sequence number of the last event queued for this subscription (commit order: the row lock orders them).
  last_sequence           bigint NOT NULL DEFAULT 0,
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL,
  deleted_at              timestamptz
);
CREATE INDEX event_subscriptions_team_idx ON event_subscriptions (team_id, id) WHERE deleted_at IS NULL;

-- One row per event x subscription (trigger 'event') and per manual retry (trigger 'manual').
CREATE TABLE subscription_deliveries (
  id              text PRIMARY KEY,
  subscription_id text NOT NULL REFERENCES event_subscriptions(id),
  team_id         text NOT NULL,
  event_id        text NOT NULL,
  sequence        bigint NOT NULL,
  trigger         text NOT NULL CHECK (trigger IN ('event', 'manual')),
  retry_of        text,
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
  -- Holds its place in the subscription's commit order: later events wait while it is pending. False for manual
  -- retries and for a delivery that blocked for 24 hours (it keeps its retries, out of order).
  ordered         boolean NOT NULL,
  attempt_count   integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- The first failed attempt while ordered: the 24-hour block is counted from here.
  blocking_since  timestamptz,
  released_at     timestamptz,
  lease_until     timestamptz,
  last_error      text,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL
);
CREATE INDEX subscription_deliveries_head_idx ON subscription_deliveries (subscription_id, sequence)
  WHERE status = 'pending' AND ordered;
CREATE INDEX subscription_deliveries_list_idx ON subscription_deliveries (subscription_id, id DESC);
CREATE INDEX subscription_deliveries_pending_idx ON subscription_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX subscription_deliveries_created_idx ON subscription_deliveries (created_at);
CREATE INDEX subscription_deliveries_event_idx ON subscription_deliveries (event_id);

CREATE TABLE subscription_attempts (
  id           text PRIMARY KEY,
  delivery_id  text NOT NULL REFERENCES subscription_deliveries(id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  status_code  integer,
  -- null for a 2xx; http_status, timeout, network_error, tls_error, unsafe_destination otherwise.
  error_kind   text,
  error        text,
  duration_ms  integer NOT NULL,
  UNIQUE (delivery_id, attempt)
);
