-- Circuit writes are fenced (docs/delivery.md, "Circuits are fenced"). The owner of an endpoint keeps its circuit in
-- memory and settlement writes what memory says; during a handoff two workers' settlements, or a resume or
-- retry_now followed by a failure settling from the owner's older memory, overwrote each other (the last writer
-- won, and a resumed circuit could open again with its old probe time).
--
-- Every row now has a version, new at every insert and every update, whoever writes it (the API's resume and
-- retry_now, a URL change, the claim that half-opens a probe, settlement). The engine reads it with the circuit and
-- writes only when the row still has the version it read; otherwise it writes nothing, emits no circuit event, and
-- reads the row again at its next claim.
CREATE SEQUENCE endpoint_health_versions;

ALTER TABLE endpoint_health ADD COLUMN version bigint NOT NULL DEFAULT nextval('endpoint_health_versions');

CREATE FUNCTION endpoint_health_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.version := nextval('endpoint_health_versions');
  RETURN NEW;
END $$;

CREATE TRIGGER endpoint_health_version BEFORE UPDATE ON endpoint_health
  FOR EACH ROW EXECUTE FUNCTION endpoint_health_next_version();
