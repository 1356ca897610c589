-- Admission in batches (docs/admission.md): rate tokens leased in chunks, endpoint rules cached per tenant by a
-- configuration version, and the opening step of an admission batch in one round trip.

-- A server process takes rate tokens in chunks and spends them in memory; the statement that takes a chunk says
-- how many it granted (fewer than asked when the bucket runs low).
ALTER TABLE rate_limit_buckets ADD COLUMN granted integer NOT NULL DEFAULT 0;

-- A tenant's endpoint configuration version: moves whenever an endpoint of the tenant is created, changed or
-- deleted, whoever writes it (the API, the engine disabling an endpoint, a tenant's deletion). Admission keeps the
-- tenant's endpoints and their compiled rules per process and reads them again only when this moved. A tenant
-- without a row is at version 0.
CREATE TABLE tenant_endpoint_versions (
  tenant_id text PRIMARY KEY,
  version   bigint NOT NULL
);

CREATE FUNCTION bump_tenant_endpoint_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_tenant text := CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END;
BEGIN
  INSERT INTO tenant_endpoint_versions AS v (tenant_id, version) VALUES (v_tenant, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER endpoints_bump_tenant_version AFTER INSERT OR UPDATE OR DELETE ON endpoints
  FOR EACH ROW EXECUTE FUNCTION bump_tenant_endpoint_version();

-- The opening step of an admission batch, one round trip, in this order:
--   1. each request's Idempotency-Key lock, without waiting (a twin elsewhere holds it: request_in_progress);
--   2. each team's queue lock, waiting, in team ID order (admissions of a team check and move the team's queue
--      counters one transaction at a time, so max_pending_deliveries and max_content_bytes hold exactly);
--   3. with a fresh snapshot (a VOLATILE function's statements each take one under READ COMMITTED, so a twin or
--      an admission that committed while this one waited for a lock is always seen): the requests' live
--      idempotency records;
--   4. for each team, one admission slot (of p_slots transaction-scoped advisory locks, without waiting) per
--      request that will run (not a replay, not refused by its key);
--   5. again fresh: the teams' queue counters and the payers' spend rows of the billing month.
-- p_teams and p_keys are per request (a key is NULL for a request without one); p_payers are distinct key IDs.
CREATE FUNCTION admission_begin(p_teams text[], p_keys text[], p_now timestamptz, p_slots integer,
                                p_payers text[], p_month date)
RETURNS TABLE (requests jsonb, teams jsonb, payers jsonb)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_locked boolean[] := '{}';
  v_requests jsonb;
  v_team text;
  v_needed integer;
  v_slots jsonb := '{}';
  v_taken integer[];
  i integer;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_teams, 1), 0) LOOP
    v_locked[i] := p_keys[i] IS NULL
      OR pg_try_advisory_xact_lock(hashtextextended('idempotency:' || p_teams[i] || ':' || p_keys[i], 0));
  END LOOP;

  FOR v_team IN SELECT DISTINCT t FROM unnest(p_teams) AS t ORDER BY t LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('admission-queue:' || v_team, 0));
  END LOOP;

  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'locked', v_locked[r.ix::integer],
           'fingerprint', x.fingerprint,
           'key_id', x.key_id,
           'response_status', x.response_status,
           'response_headers', x.response_headers,
           'response_body', encode(x.response_body, 'base64')) ORDER BY r.ix), '[]'::jsonb)
    INTO v_requests
    FROM unnest(p_teams, p_keys) WITH ORDINALITY AS r(team_id, key, ix)
    LEFT JOIN idempotency_records x
      ON v_locked[r.ix::integer] AND x.team_id = r.team_id AND x.idempotency_key = r.key AND x.expires_at > p_now;

  FOR v_team, v_needed IN
    SELECT r.team_id, count(*) FILTER (WHERE (q->>'locked')::boolean AND q->>'fingerprint' IS NULL)
      FROM unnest(p_teams) WITH ORDINALITY AS r(team_id, ix)
      JOIN jsonb_array_elements(v_requests) WITH ORDINALITY AS e(q, ix) USING (ix)
     GROUP BY r.team_id ORDER BY r.team_id
  LOOP
    v_taken := '{}';
    FOR i IN 0 .. p_slots - 1 LOOP
      EXIT WHEN coalesce(array_length(v_taken, 1), 0) >= v_needed;
      IF pg_try_advisory_xact_lock(hashtextextended('admission:' || v_team, i)) THEN
        v_taken := v_taken || i;
      END IF;
    END LOOP;
    v_slots := v_slots || jsonb_build_object(v_team, to_jsonb(v_taken));
  END LOOP;

  RETURN QUERY SELECT
    v_requests,
    (SELECT coalesce(jsonb_agg(jsonb_build_object(
              'team_id', t.team_id,
              'slots', v_slots -> t.team_id,
              'pending', (SELECT coalesce(sum(c.pending), 0) FROM team_queue_counts c WHERE c.team_id = t.team_id),
              'content_bytes',
                (SELECT coalesce(sum(c.content_bytes), 0) FROM team_queue_counts c WHERE c.team_id = t.team_id))),
              '[]'::jsonb)
       FROM (SELECT DISTINCT team_id FROM unnest(p_teams) AS team_id) t),
    (SELECT coalesce(jsonb_agg(jsonb_build_object('key_id', s.key_id, 'spent', s.spent_micros::text,
                                                  'closed', s.closed)), '[]'::jsonb)
       FROM key_monthly_spend s WHERE s.key_id = ANY(p_payers) AND s.billing_month = p_month);
END $$;
