-- SVC_ENCRYPTION_KEY is checked at start (docs/upgrading.md, "The sealing key is checked at start"): the first
-- process to start records a fixed text sealed with its key; every later start must open it, or refuses to start
-- in one line. One row at most. The sealed value names the key's ID (a 4-byte fingerprint), never the key.
CREATE TABLE sealing_key_check (
  id         boolean PRIMARY KEY DEFAULT true CHECK (id),
  sealed     bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The extension event type webhooks.worker.sealing_key_mismatch (docs/events.md): a worker could not open an
-- endpoint's secrets (sealed with another key) and handed its deliveries back unsent. Widened from the current check,
-- as 0026 does, so types other migrations add are kept.
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
    $types$'webhooks.worker.sealing_key_mismatch'$types$);
END $$;
