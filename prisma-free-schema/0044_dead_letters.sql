-- migrate: steps
-- Settling a delivery becomes a HOT update (docs/delivery.md, "Settlement writes"). Postgres rewrites a row in place,
-- without a new entry in each of its indexes, only when no indexed column changed, and a partial index's predicate
-- counts: deliveries_dead_letters_idx (WHERE status IN ('failed', 'expired')) made every settlement write a new entry
-- in all seven indexes of deliveries. The dead letters are listed from a narrow table of their own instead, kept by
-- triggers that fire only when a delivery enters or leaves the dead letters (a trigger's WHEN is checked per row in
-- the executor, without calling the function), and the deliveries partitions leave a fifth of each page free for the
-- rewritten rows.
--
-- Every step can run again (the migration runner reruns the file from its first step after a failure).

-- step: the table, its triggers and its rows, in one transaction (the triggers' lock holds writers back while the
-- existing dead letters are copied through the old partial index, so none is missed or copied twice)
CREATE TABLE IF NOT EXISTS delivery_dead_letters (
  id text PRIMARY KEY,
  team_id text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS delivery_dead_letters_team_idx ON delivery_dead_letters (team_id, created_at, id);

CREATE OR REPLACE FUNCTION deliveries_keep_dead_letters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.status IN ('failed', 'expired') THEN
    DELETE FROM delivery_dead_letters WHERE id = OLD.id;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.status IN ('failed', 'expired') THEN
    INSERT INTO delivery_dead_letters (id, team_id, created_at) VALUES (NEW.id, NEW.team_id, NEW.created_at)
    ON CONFLICT (id) DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS deliveries_dead_letters_insert ON deliveries;
CREATE TRIGGER deliveries_dead_letters_insert AFTER INSERT ON deliveries FOR EACH ROW
  WHEN (NEW.status IN ('failed', 'expired')) EXECUTE FUNCTION deliveries_keep_dead_letters();
DROP TRIGGER IF EXISTS deliveries_dead_letters_update ON deliveries;
CREATE TRIGGER deliveries_dead_letters_update AFTER UPDATE OF status ON deliveries FOR EACH ROW
  WHEN ((OLD.status IN ('failed', 'expired')) <> (NEW.status IN ('failed', 'expired')))
  EXECUTE FUNCTION deliveries_keep_dead_letters();
DROP TRIGGER IF EXISTS deliveries_dead_letters_delete ON deliveries;
CREATE TRIGGER deliveries_dead_letters_delete AFTER DELETE ON deliveries FOR EACH ROW
  WHEN (OLD.status IN ('failed', 'expired')) EXECUTE FUNCTION deliveries_keep_dead_letters();

INSERT INTO delivery_dead_letters (id, team_id, created_at)
SELECT id, team_id, created_at FROM deliveries WHERE status IN ('failed', 'expired')
ON CONFLICT (id) DO NOTHING;

-- step
DROP INDEX IF EXISTS deliveries_dead_letters_idx;

-- step: room for the settlement's rewrite on each page, for the partitions that exist (new pages only: rows already
-- stored stay where they are) and for those the partition maintenance makes (packages/core/src/retention)
ALTER TABLE time_partitioned_tables ADD COLUMN IF NOT EXISTS fillfactor smallint;
UPDATE time_partitioned_tables SET fillfactor = 80 WHERE table_name = 'deliveries';
DO $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'deliveries'::regclass LOOP
    EXECUTE format('ALTER TABLE %I SET (fillfactor = 80)', p.relname);
  END LOOP;
END $$;
