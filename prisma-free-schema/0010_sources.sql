-- Sources: a public receive URL per source where another provider's webhooks are verified, deduplicated and
-- turned into messages of the source's tenant (docs/sources.md).

CREATE TABLE sources (
  id                text PRIMARY KEY,
  team_id           text NOT NULL REFERENCES teams(id),
  tenant_id         text NOT NULL REFERENCES tenants(id),
  name              text NOT NULL,
  kind              text NOT NULL,
  -- The kind's settings without the secret (write-only secrets live in source_secrets).
  settings          jsonb NOT NULL DEFAULT '{}'::jsonb,
  event_type        text,
  event_type_path   text,
  event_type_prefix text,
  billing_key_id    text NOT NULL REFERENCES api_keys(id),
  status            text NOT NULL CHECK (status IN ('active', 'paused')),
  metadata          jsonb NOT NULL DEFAULT '{}'::jsonb,
  version           bigint NOT NULL DEFAULT 1,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL,
  deleted_at        timestamptz,
  CHECK ((event_type IS NULL) <> (event_type_path IS NULL))
);
CREATE INDEX sources_team_idx ON sources (team_id, id) WHERE deleted_at IS NULL;
CREATE INDEX sources_tenant_idx ON sources (tenant_id) WHERE deleted_at IS NULL;

-- Verification secrets, sealed. The current one has expires_at NULL; a rotated-out one verifies until its overlap
-- ends.
CREATE TABLE source_secrets (
  source_id     text NOT NULL REFERENCES sources(id),
  version       integer NOT NULL,
  secret_sealed bytea NOT NULL,
  -- Made by the service (shown once, and again only in an idempotent replay to the key that made it).
  generated     boolean NOT NULL DEFAULT false,
  created_by    text NOT NULL,
  expires_at    timestamptz,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (source_id, version)
);

-- Receive tokens: looked up by their SHA-256 (the token never is a key), sealed so an idempotent replay of the
-- create or rotate can show the receive URL again to the key that made it while it is current.
CREATE TABLE source_tokens (
  token_sha256 bytea PRIMARY KEY,
  source_id    text NOT NULL REFERENCES sources(id),
  version      integer NOT NULL,
  token_sealed bytea NOT NULL,
  created_by   text NOT NULL,
  expires_at   timestamptz,
  created_at   timestamptz NOT NULL,
  UNIQUE (source_id, version)
);

-- Deduplication: the provider's event ID (kept 35 days) or the body's SHA-256 (24 hours) per source.
CREATE TABLE source_event_ids (
  source_id  text NOT NULL REFERENCES sources(id),
  event_key  text NOT NULL,
  message_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (source_id, event_key)
);
CREATE INDEX source_event_ids_expiry_idx ON source_event_ids (expires_at);

-- A source's captures, newest first (its page in the console).
CREATE INDEX messages_source_idx ON messages (source_id, created_at) WHERE source_id IS NOT NULL;
