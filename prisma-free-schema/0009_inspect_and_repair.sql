-- Inspect and repair: message and delivery lists, content erasure (redaction and retention), replays.

-- When the message's content (its body and every transformed copy) was erased, and by which transaction: a
-- redaction is complete once no snapshot that could still see the old row versions remains and VACUUM has run.
ALTER TABLE messages ADD COLUMN content_erased_at timestamptz;
ALTER TABLE messages ADD COLUMN erase_txid xid8;

-- The content of a message is readable until this moment: the retention the message was accepted with, shortened
-- at once by a shorter payload_retention_days setting (never lengthened) but never before its delivery window
-- ends, and cut short when its tenant is deleted. One definition for reads, replays and the retention sweep.
CREATE FUNCTION message_retained_until(stored timestamptz, created timestamptz, expires timestamptz, days integer,
                                       tenant_deleted timestamptz)
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN LEAST(stored, GREATEST(created + make_interval(days => coalesce(days, 30)), expires), tenant_deleted);

-- Retention sweep candidates: content still stored, per team in age order, and by the retention accepted with.
CREATE INDEX messages_content_live_idx ON messages (team_id, created_at) WHERE content_erased_at IS NULL;
CREATE INDEX messages_content_due_idx ON messages (retained_until) WHERE content_erased_at IS NULL;
CREATE INDEX messages_redacting_idx ON messages (redacted_at) WHERE redaction_status = 'redacting';
CREATE INDEX messages_team_external_idx ON messages (team_id, external_id, created_at) WHERE external_id IS NOT NULL;

-- A deleted tenant's content is erased by the sweep; this marks when none was left, so later sweeps skip it.
ALTER TABLE tenants ADD COLUMN content_erased_at timestamptz;

-- Lists page by (created_at, id) (docs/deliveries.md), not by the txid feeds 0005 prepared: drop their indexes,
-- so admission writes no index it does not use.
DROP INDEX messages_team_feed_idx;
DROP INDEX deliveries_team_feed_idx;

-- Replays: the bulk replay job that created a generation (NULL for originals and single replays) and the key that
-- paid for it (originals are paid by the message's paying key).
ALTER TABLE deliveries ADD COLUMN replay_id text;
ALTER TABLE deliveries ADD COLUMN paying_key_id text REFERENCES api_keys(id);

-- GET /deliveries: oldest first within a window; the dead letters (failed, expired) have their own index.
CREATE INDEX deliveries_team_created_idx ON deliveries (team_id, created_at, id);
CREATE INDEX deliveries_dead_letters_idx ON deliveries (team_id, created_at, id) WHERE status IN ('failed', 'expired');
CREATE INDEX deliveries_endpoint_created_idx ON deliveries (endpoint_id, created_at, id);

-- Response bodies follow response_retention_days: the sweep finds the kept ones by age.
CREATE INDEX attempts_response_kept_idx ON attempts (created_at) WHERE response_body IS NOT NULL;
