-- Teams, keys and the configuration resources of the walking skeleton.
-- Times are timestamptz (UTC). Versions are bigint counters rendered as decimal strings by the API.

CREATE TABLE teams (
  id                 text PRIMARY KEY,
  name               text NOT NULL,
  suspended          boolean NOT NULL DEFAULT false,
  webhooks_suspended boolean NOT NULL DEFAULT false,
  has_payment_card   boolean NOT NULL DEFAULT true,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id                    text PRIMARY KEY,
  team_id               text NOT NULL REFERENCES teams(id),
  kind                  text NOT NULL CHECK (kind IN ('secret', 'publishable')),
  secret_sha256         bytea NOT NULL UNIQUE,
  webhooks_allowed      boolean NOT NULL DEFAULT true,
  spending_limit_micros bigint CHECK (spending_limit_micros IS NULL OR spending_limit_micros >= 0),
  revoked_at            timestamptz,
  created_at            timestamptz NOT NULL
);
CREATE INDEX api_keys_team_idx ON api_keys (team_id);

CREATE TABLE tenants (
  id          text PRIMARY KEY,
  team_id     text NOT NULL REFERENCES teams(id),
  external_id text NOT NULL,
  name        text NOT NULL,
  metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
  status      text NOT NULL CHECK (status IN ('active', 'deleted')),
  version     bigint NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  deleted_at  timestamptz
);
CREATE INDEX tenants_team_id_idx ON tenants (team_id, id);
CREATE INDEX tenants_team_external_idx ON tenants (team_id, external_id, id);

-- One row per external_id in use or reserved. A deleted tenant keeps its claim for 90 days
-- (reserved_until); a later create may take over an expired claim.
CREATE TABLE tenant_external_id_claims (
  team_id        text NOT NULL REFERENCES teams(id),
  external_id    text NOT NULL,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  reserved_until timestamptz,
  PRIMARY KEY (team_id, external_id)
);

CREATE TABLE event_types (
  id          text PRIMARY KEY,
  team_id     text NOT NULL REFERENCES teams(id),
  name        text NOT NULL,
  description text NOT NULL DEFAULT '',
  example     text,
  archived    boolean NOT NULL DEFAULT false,
  version     bigint NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  UNIQUE (team_id, name)
);
CREATE INDEX event_types_team_id_idx ON event_types (team_id, id);

CREATE TABLE team_settings (
  team_id                        text PRIMARY KEY REFERENCES teams(id),
  configuration_version          bigint NOT NULL DEFAULT 1,
  approved_configuration_version bigint NOT NULL DEFAULT 1,
  payload_retention_days         integer NOT NULL DEFAULT 30 CHECK (payload_retention_days BETWEEN 1 AND 30),
  response_body_logging          boolean NOT NULL DEFAULT false,
  response_retention_days        integer NOT NULL DEFAULT 7 CHECK (response_retention_days BETWEEN 1 AND 7),
  updated_at                     timestamptz NOT NULL
);

-- Idempotency records: claimed before the work runs, completed in the work's own transaction.
CREATE TABLE idempotency_records (
  team_id          text NOT NULL,
  idempotency_key  text NOT NULL,
  key_id           text NOT NULL,
  fingerprint      text NOT NULL,
  state            text NOT NULL CHECK (state IN ('running', 'completed')),
  locked_until     timestamptz NOT NULL,
  response_status  integer,
  response_headers jsonb,
  response_body    bytea,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (team_id, idempotency_key)
);
CREATE INDEX idempotency_records_expiry_idx ON idempotency_records (expires_at);

-- Token buckets for per-team request rate limits.
CREATE TABLE rate_limit_buckets (
  team_id    text NOT NULL,
  bucket     text NOT NULL,
  tokens     double precision NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (team_id, bucket)
);

-- Charges: one ledger row per priced unit of accepted work, keyed by the paying key.
CREATE TABLE charges (
  id            text PRIMARY KEY,
  team_id       text NOT NULL REFERENCES teams(id),
  key_id        text NOT NULL REFERENCES api_keys(id),
  meter         text NOT NULL,
  units         bigint NOT NULL CHECK (units > 0),
  amount_micros bigint NOT NULL CHECK (amount_micros >= 0),
  rate_version  text NOT NULL,
  resource_id   text NOT NULL,
  billing_month date NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX charges_key_month_idx ON charges (key_id, billing_month);

-- Running month-to-date spend per key, updated atomically with the charge that moves it.
CREATE TABLE key_monthly_spend (
  key_id        text NOT NULL REFERENCES api_keys(id),
  billing_month date NOT NULL,
  spent_micros  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, billing_month)
);
