-- Endpoints (receivers) and their signing secrets. Secret values, custom header values and the authorization
-- value are stored sealed (AES-256-GCM, see packages/core/src/common/sealing.ts), never in plain text.

CREATE TABLE endpoints (
  id                    text PRIMARY KEY,
  team_id               text NOT NULL REFERENCES teams(id),
  tenant_id             text NOT NULL REFERENCES tenants(id),
  url                   text NOT NULL,
  url_host              text NOT NULL,
  url_revision          bigint NOT NULL DEFAULT 1,
  name                  text NOT NULL,
  description           text NOT NULL DEFAULT '',
  events                jsonb NOT NULL,
  filter                text,
  transform             text,
  transform_version     bigint NOT NULL DEFAULT 1,
  status                text NOT NULL CHECK (status IN ('enabled', 'paused', 'disabled')),
  disabled_reason       text,
  rate_per_second       integer NOT NULL,
  max_concurrency       integer NOT NULL CHECK (max_concurrency BETWEEN 1 AND 3),
  retry_delays_seconds  jsonb NOT NULL,
  timeout_seconds       integer NOT NULL,
  header_names          jsonb NOT NULL DEFAULT '[]'::jsonb,
  headers_sealed        bytea,
  authorization_sealed  bytea,
  metadata              jsonb NOT NULL DEFAULT '{}'::jsonb,
  secret_version        integer NOT NULL DEFAULT 1,
  old_secret_expires_at timestamptz,
  circuit               text NOT NULL DEFAULT 'closed' CHECK (circuit IN ('closed', 'half_open', 'open')),
  consecutive_failures  integer NOT NULL DEFAULT 0,
  last_success_at       timestamptz,
  last_failure_at       timestamptz,
  next_probe_at         timestamptz,
  version               bigint NOT NULL DEFAULT 1,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  deleted_at            timestamptz
);
CREATE INDEX endpoints_team_idx ON endpoints (team_id, id) WHERE deleted_at IS NULL;
CREATE INDEX endpoints_tenant_idx ON endpoints (tenant_id, id) WHERE deleted_at IS NULL;

-- Every signing secret an endpoint has had. The current one has expires_at NULL; a rotated one signs until
-- its expires_at (the rotation overlap).
CREATE TABLE endpoint_secrets (
  endpoint_id       text NOT NULL REFERENCES endpoints(id),
  secret_version    integer NOT NULL,
  secret_sealed     bytea NOT NULL,
  created_by_key_id text NOT NULL,
  created_at        timestamptz NOT NULL,
  expires_at        timestamptz,
  PRIMARY KEY (endpoint_id, secret_version)
);
