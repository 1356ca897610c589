-- Console sessions: the web console keeps only a session token in its cookie, never the secret key.
-- Only the SHA-256 of the token is stored. A session acts as the key that created it: revoking the key,
-- suspending the team or passing expires_at ends it. revoked_at is set at sign-out.
CREATE TABLE console_sessions (
  id           text PRIMARY KEY,
  team_id      text NOT NULL REFERENCES teams(id),
  key_id       text NOT NULL REFERENCES api_keys(id),
  token_sha256 bytea NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  last_seen_at timestamptz NOT NULL
);
-- Retention deletes sessions that ended long ago by expiry.
CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at);
CREATE INDEX console_sessions_key_idx ON console_sessions (key_id);
