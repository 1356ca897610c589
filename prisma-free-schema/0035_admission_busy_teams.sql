-- Admission does not couple teams (docs/admission.md, "A busy team waits alone"): a batch of a server process
-- carries many teams' requests, and admission_begin (0016) waits for each team's queue lock. While one team's lock
-- is held for long (its bulk replay, another process's batch of that team), every other team's request in the batch
-- waited with it.
--
-- admission_begin_v2 is admission_begin with p_wait: when false it takes each team's queue lock without waiting, and
-- a team whose lock is held elsewhere is left out of the batch: none of its requests takes an Idempotency-Key lock
-- or an admission slot, and the team comes back in `busy`. The process then admits that team's requests in a
-- transaction of their own which waits for the lock (p_wait true), beside its other batches. With p_wait true it is
-- admission_begin exactly. admission_begin stays for processes of the previous release during a rolling upgrade.
CREATE FUNCTION admission_begin_v2(p_teams text[], p_keys text[], p_now timestamptz, p_slots integer,
                                   p_payers text[], p_month date, p_wait boolean)
RETURNS TABLE (requests jsonb, teams jsonb, payers jsonb, busy text[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_busy text[] := '{}';
  v_locked boolean[] := '{}';
  v_requests jsonb;
  v_team text;
  v_needed integer;
  v_slots jsonb := '{}';
  v_taken integer[];
  i integer;
BEGIN
  -- The queue locks first when not waiting: a busy team's requests then take no Idempotency-Key lock, which a
  -- twin of theirs arriving meanwhile would find held (request_in_progress) although nothing runs it.
  IF NOT p_wait THEN
    FOR v_team IN SELECT DISTINCT t FROM unnest(p_teams) AS t ORDER BY t LOOP
      IF NOT pg_try_advisory_xact_lock(hashtextextended('admission-queue:' || v_team, 0)) THEN
        v_busy := v_busy || v_team;
      END IF;
    END LOOP;
  END IF;

  FOR i IN 1 .. coalesce(array_length(p_teams, 1), 0) LOOP
    v_locked[i] := p_teams[i] <> ALL (v_busy) AND (p_keys[i] IS NULL
      OR pg_try_advisory_xact_lock(hashtextextended('idempotency:' || p_teams[i] || ':' || p_keys[i], 0)));
  END LOOP;

  IF p_wait THEN
    FOR v_team IN SELECT DISTINCT t FROM unnest(p_teams) AS t ORDER BY t LOOP
      PERFORM pg_advisory_xact_lock(hashtextextended('admission-queue:' || v_team, 0));
    END LOOP;
  END IF;

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
     WHERE r.team_id <> ALL (v_busy)
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
       FROM (SELECT DISTINCT team_id FROM unnest(p_teams) AS team_id WHERE team_id <> ALL (v_busy)) t),
    (SELECT coalesce(jsonb_agg(jsonb_build_object('key_id', s.key_id, 'spent', s.spent_micros::text,
                                                  'closed', s.closed)), '[]'::jsonb)
       FROM key_monthly_spend s WHERE s.key_id = ANY(p_payers) AND s.billing_month = p_month),
    v_busy;
END $$;
