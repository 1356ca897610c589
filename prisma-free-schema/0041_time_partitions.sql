-- migrate: steps
-- Daily partitions for the big time-ordered tables (docs/scaling.md, "Partitioning by time"; docs/retention.md):
-- messages, message_contents, deliveries and attempts become RANGE partitioned on their ID (IDs sort by creation
-- time: a prefix, then 48-bit milliseconds in Crockford base32), so the primary key stays the ID, a lookup by ID
-- prunes to one partition, and retention drops a day's partition instead of deleting its rows.
--
-- Online: each existing table becomes the first ("legacy") partition of a new parent. Its bound is checked by a
-- NOT VALID constraint (a short lock), validated (SHARE UPDATE EXCLUSIVE: reads and writes go on), and then a short
-- transaction renames it, makes the parent and attaches it; the validated CHECK lets ATTACH skip the scan. The runner
-- runs each step in its own transaction with a 250 ms lock_timeout and retries a step that timed out (migrate.ts).
-- Every step can run again: a failure halfway reruns the file from the top at the next start.
--
-- The foreign keys between these four tables go: a day's partitions are dropped by time, and a key between two
-- partitioned tables would make every drop (or detach) scan the referencing table. The write paths keep them
-- consistent (a message, its content and its deliveries are written in one transaction; an attempt with its
-- delivery's settlement), and the maintenance never drops a messages partition while a delivery of one of its
-- messages is pending, then deletes the few later deliveries (replays) of its messages row by row.

-- step: the registry and the helpers
CREATE TABLE IF NOT EXISTS time_partitioned_tables (
  table_name   text PRIMARY KEY,
  key_column   text NOT NULL,
  id_prefix    text NOT NULL,
  -- The upper bound of the legacy partition (the table as it was before this migration), NULL once it is dropped.
  legacy_bound text,
  swapped      boolean NOT NULL DEFAULT false
);
INSERT INTO time_partitioned_tables (table_name, key_column, id_prefix) VALUES
  ('messages', 'id', 'wdm_'), ('message_contents', 'message_id', 'wdm_'),
  ('deliveries', 'id', 'wdd_'), ('attempts', 'id', 'wda_')
ON CONFLICT (table_name) DO NOTHING;

-- The smallest ID of `prefix` made at `at` (milliseconds, then 80 zero bits), as ids.ts encodes it.
CREATE OR REPLACE FUNCTION id_time_bound(prefix text, at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT prefix || string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz',
                                     (((floor(extract(epoch FROM at) * 1000)::bigint * 4) >> (5 * (9 - k))) & 31)::int + 1,
                                     1), '' ORDER BY k) || repeat('0', 16)
    FROM generate_series(0, 9) AS k
$$;

-- The partition of `tbl` holding the IDs made on `day` (UTC): tbl_pYYYYMMDD.
CREATE OR REPLACE FUNCTION time_partition_name(tbl text, day date) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT tbl || '_p' || to_char(day, 'YYYYMMDD') $$;

-- Adds the legacy bound as a NOT VALID check (enforced for new rows at once, existing rows checked by the next
-- step), two days ahead so that rows written while the migration runs still fit. Redone when a previous run
-- stopped before the swap.
CREATE OR REPLACE FUNCTION time_partitioning_prepare(tbl text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  r time_partitioned_tables;
  bound text;
BEGIN
  SELECT * INTO r FROM time_partitioned_tables WHERE table_name = tbl;
  IF r.swapped THEN RETURN; END IF;
  bound := id_time_bound(r.id_prefix, ((now() AT TIME ZONE 'UTC')::date + 2)::timestamp AT TIME ZONE 'UTC');
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT IF EXISTS %I', tbl, tbl || '_legacy_bound');
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I < %L) NOT VALID', tbl, tbl || '_legacy_bound',
                 r.key_column, bound);
  UPDATE time_partitioned_tables SET legacy_bound = bound WHERE table_name = tbl;
END $$;

CREATE OR REPLACE FUNCTION time_partitioning_validate(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT swapped FROM time_partitioned_tables WHERE table_name = tbl) THEN RETURN; END IF;
  EXECUTE format('ALTER TABLE %I VALIDATE CONSTRAINT %I', tbl, tbl || '_legacy_bound');
END $$;

-- Drops the foreign keys between the partitioned tables (see the top of this file).
CREATE OR REPLACE FUNCTION time_partitioning_drop_internal_keys(tbl text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT conname FROM pg_constraint
            WHERE contype = 'f' AND conrelid = tbl::regclass
              AND confrelid::regclass::text IN (SELECT table_name FROM time_partitioned_tables) LOOP
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', tbl, c.conname);
  END LOOP;
END $$;

-- The short part: rename the table to <tbl>_legacy, make the partitioned parent with the same columns, checks,
-- indexes (same names; the legacy ones get a _legacy suffix) and foreign keys, attach the legacy table below its
-- validated bound, and make the daily partitions from there to 7 days ahead and the DEFAULT partition.
CREATE OR REPLACE FUNCTION time_partitioning_swap(tbl text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  r time_partitioned_tables;
  legacy text := tbl || '_legacy';
  i record;
  c record;
  day date;
BEGIN
  SELECT * INTO r FROM time_partitioned_tables WHERE table_name = tbl;
  IF r.swapped THEN RETURN; END IF;
  EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', tbl);
  EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, legacy);
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE '
                 'INCLUDING COMPRESSION INCLUDING GENERATED INCLUDING COMMENTS) PARTITION BY RANGE (%I)',
                 tbl, legacy, r.key_column);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', tbl, tbl || '_legacy_bound');
  FOR i IN SELECT ic.relname AS name, x.indisprimary AS primary_key, x.indisunique AS is_unique,
                  pg_get_indexdef(x.indexrelid) AS def, con.conname
             FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
             LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.contype = 'p'
            WHERE x.indrelid = legacy::regclass LOOP
    IF i.primary_key THEN
      EXECUTE format('ALTER INDEX %I RENAME TO %I', i.name, left(i.name, 56) || '_legacy');
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', tbl, i.conname,
                     pg_get_constraintdef((SELECT oid FROM pg_constraint
                                            WHERE conrelid = legacy::regclass AND contype = 'p')));
    ELSE
      EXECUTE format('ALTER INDEX %I RENAME TO %I', i.name, left(i.name, 56) || '_legacy');
      EXECUTE format('CREATE %sINDEX %I ON %I %s', CASE WHEN i.is_unique THEN 'UNIQUE ' ELSE '' END, i.name, tbl,
                     substring(i.def FROM ' USING .*$'));
    END IF;
  END LOOP;
  FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
            WHERE conrelid = legacy::regclass AND contype = 'f' LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', tbl, c.conname, c.def);
  END LOOP;
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', tbl, legacy,
                 r.legacy_bound);
  UPDATE time_partitioned_tables SET swapped = true WHERE table_name = tbl;
  -- The days after the legacy bound, a week ahead, and the safety net for IDs beyond them.
  FOR day IN SELECT generate_series((now() AT TIME ZONE 'UTC')::date + 2, (now() AT TIME ZONE 'UTC')::date + 8,
                                    interval '1 day')::date LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', time_partition_name(tbl, day),
                   tbl, id_time_bound(r.id_prefix, day::timestamp AT TIME ZONE 'UTC'),
                   id_time_bound(r.id_prefix, (day + 1)::timestamp AT TIME ZONE 'UTC'));
  END LOOP;
  EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', tbl || '_default', tbl);
END $$;

-- step
SELECT time_partitioning_prepare(table_name) FROM time_partitioned_tables ORDER BY table_name;
-- step: validate, one table a transaction (SHARE UPDATE EXCLUSIVE: the table stays readable and writable)
SELECT time_partitioning_validate('attempts');
-- step
SELECT time_partitioning_validate('deliveries');
-- step
SELECT time_partitioning_validate('message_contents');
-- step
SELECT time_partitioning_validate('messages');
-- step
SELECT time_partitioning_drop_internal_keys('attempts');
-- step
SELECT time_partitioning_drop_internal_keys('deliveries');
-- step
SELECT time_partitioning_drop_internal_keys('message_contents');
-- step: the swaps, one table a transaction
SELECT time_partitioning_swap('attempts');
-- step
SELECT time_partitioning_swap('deliveries');
-- step
SELECT time_partitioning_swap('message_contents');
-- step
SELECT time_partitioning_swap('messages');
