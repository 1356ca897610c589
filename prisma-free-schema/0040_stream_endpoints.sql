-- Stream endpoints (issue 29, docs/streams.md): an endpoint whose receiver has no public URL opens a Server-Sent
-- Events stream and fetches its deliveries instead of having them POSTed. Its deliveries keep every other record
-- (delivery_queue, deliveries, attempts): a stream connection leases queue rows like a worker does, with its own
-- ID (wdc_...) as lease_owner.
ALTER TABLE endpoints ADD COLUMN delivery_mode text NOT NULL DEFAULT 'push' CHECK (delivery_mode IN ('push', 'stream'));

-- Endpoint-scoped bearer tokens for the stream and its acknowledgements: shown once, kept as SHA-256.
CREATE TABLE stream_tokens (
  id            text PRIMARY KEY,
  team_id       text NOT NULL REFERENCES teams(id),
  endpoint_id   text NOT NULL REFERENCES endpoints(id),
  name          text NOT NULL,
  token_sha256  bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL,
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX stream_tokens_endpoint_idx ON stream_tokens (endpoint_id, id);

-- Open streams, one row each, beaten by the server process that holds it: any process lists them, counts them
-- against the limits and knows a lease whose connection stopped beating (its process died) is free again.
CREATE TABLE stream_connections (
  id             text PRIMARY KEY,
  team_id        text NOT NULL REFERENCES teams(id),
  endpoint_id    text NOT NULL REFERENCES endpoints(id),
  token_id       text NOT NULL REFERENCES stream_tokens(id),
  remote_address text NOT NULL,
  opened_at      timestamptz NOT NULL,
  beat_at        timestamptz NOT NULL
);
CREATE INDEX stream_connections_endpoint_idx ON stream_connections (endpoint_id);
CREATE INDEX stream_connections_team_idx ON stream_connections (team_id);
CREATE INDEX stream_connections_token_idx ON stream_connections (token_id);
