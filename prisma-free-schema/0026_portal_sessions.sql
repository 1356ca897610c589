-- The receivers' portal (issue 19; docs/portal.md).
--
-- A portal session lets one tenant manage its own endpoints and see its own deliveries. The operator creates it
-- with a secret key; the answer holds a one-time link. Opening the link exchanges its token for a session token
-- (the portal's cookie). Only the SHA-256 of either token is stored. The session acts as the key that created it
-- (that key pays for replays, within spending_cap_micros), scoped to tenant_id alone. It ends at expires_at, at
-- revocation, and as soon as its key is revoked, its tenant deleted or its team suspended (checked on every
-- request, as for console sessions).
CREATE TABLE portal_sessions (
  id                   text PRIMARY KEY,
  team_id              text NOT NULL REFERENCES teams(id),
  tenant_id            text NOT NULL REFERENCES tenants(id),
  key_id               text NOT NULL REFERENCES api_keys(id),
  link_token_sha256    bytea NOT NULL UNIQUE,
  session_token_sha256 bytea UNIQUE,
  capabilities         text NOT NULL CHECK (capabilities IN ('read_only', 'manage_endpoints')),
  -- The event types the tenant may see and subscribe to; null: every active event type of the team.
  event_types          text[],
  display_name         text,
  accent_color         text CHECK (accent_color ~ '^#[0-9a-f]{6}$'),
  logo_url             text,
  spending_cap_micros  bigint NOT NULL CHECK (spending_cap_micros >= 0),
  spent_micros         bigint NOT NULL DEFAULT 0 CHECK (spent_micros >= 0 AND spent_micros <= spending_cap_micros),
  created_at           timestamptz NOT NULL,
  expires_at           timestamptz NOT NULL,
  opened_at            timestamptz,
  revoked_at           timestamptz,
  last_seen_at         timestamptz
);
CREATE INDEX portal_sessions_tenant_idx ON portal_sessions (tenant_id, id);
CREATE INDEX portal_sessions_key_idx ON portal_sessions (key_id);
CREATE INDEX portal_sessions_expires_idx ON portal_sessions (expires_at);

-- The origins allowed to frame the portal (Content-Security-Policy frame-ancestors); empty: none may.
ALTER TABLE team_settings ADD COLUMN portal_frame_origins text[] NOT NULL DEFAULT '{}';

-- The extension event types webhooks.portal.* (docs/events.md): what a portal session changed. The check is
-- widened from its current definition rather than restated, so types other migrations add are kept.
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO current_check FROM pg_constraint
   WHERE conrelid = 'operational_events'::regclass AND conname = 'operational_events_type_check';
  ALTER TABLE operational_events DROP CONSTRAINT operational_events_type_check;
  EXECUTE format(
    'ALTER TABLE operational_events ADD CONSTRAINT operational_events_type_check CHECK (%s OR type IN (%s))',
    substring(current_check FROM '^CHECK (.*)$'),
    $types$'webhooks.portal.session.opened', 'webhooks.portal.endpoint.created', 'webhooks.portal.endpoint.updated',
    'webhooks.portal.endpoint.deleted', 'webhooks.portal.endpoint.resumed', 'webhooks.portal.endpoint.secret_rotated',
    'webhooks.portal.endpoint.secret_revealed', 'webhooks.portal.endpoint.tested', 'webhooks.portal.delivery.retried',
    'webhooks.portal.delivery.replayed'$types$);
END $$;
