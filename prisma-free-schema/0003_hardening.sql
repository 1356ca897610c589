-- Idempotency without leases: a request holds a transaction-scoped advisory lock on its key for as long as its
-- work's transaction lives, and the record is written, completed, in that same transaction. A crashed or
-- stalled holder can never be overtaken by a retry (the lock dies only with its transaction), so no lease,
-- no running state and no release are needed.
DELETE FROM idempotency_records WHERE state = 'running';
ALTER TABLE idempotency_records DROP COLUMN state, DROP COLUMN locked_until;
ALTER TABLE idempotency_records ALTER COLUMN response_status SET NOT NULL;
ALTER TABLE idempotency_records ALTER COLUMN response_headers SET NOT NULL;

-- Takes the key's advisory lock without waiting and, only once it is held, reads the key's record with a fresh
-- snapshot (a VOLATILE function's queries each take a new snapshot under READ COMMITTED), so a twin that
-- committed just before the lock was granted is always seen. One round trip instead of two.
CREATE FUNCTION idempotency_begin(p_team text, p_key text)
RETURNS TABLE (locked boolean, fingerprint text, key_id text, response_status integer,
               response_headers jsonb, response_body bytea, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended('idempotency:' || p_team || ':' || p_key, 0)) THEN
    RETURN QUERY SELECT false, NULL::text, NULL::text, NULL::integer, NULL::jsonb, NULL::bytea, NULL::timestamptz;
    RETURN;
  END IF;
  RETURN QUERY
    SELECT true, r.fingerprint, r.key_id, r.response_status, r.response_headers, r.response_body, r.expires_at
      FROM idempotency_records r WHERE r.team_id = p_team AND r.idempotency_key = p_key
    UNION ALL
    SELECT true, NULL, NULL, NULL, NULL, NULL, NULL
     WHERE NOT EXISTS (SELECT 1 FROM idempotency_records r WHERE r.team_id = p_team AND r.idempotency_key = p_key);
END $$;
