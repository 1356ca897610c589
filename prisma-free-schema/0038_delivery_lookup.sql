-- Issue 28: where a delivery went and its place in an ordered endpoint's sequence, for support (docs/deliveries.md).
--
-- Attempts record the endpoint's url_revision, not the URL. Each URL an endpoint has had is kept here, written by the
-- transaction that creates the endpoint or moves its url_revision, so a delivery card shows the URL an attempt went to
-- even after the URL changed. Revisions older than this migration were never recorded: the current URL of every
-- endpoint is recorded at its current revision, and an attempt at an older one shows the current URL, marked as such.
CREATE TABLE endpoint_url_revisions (
  endpoint_id  text NOT NULL REFERENCES endpoints(id),
  url_revision bigint NOT NULL,
  url          text NOT NULL,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (endpoint_id, url_revision)
);
INSERT INTO endpoint_url_revisions (endpoint_id, url_revision, url, created_at)
  SELECT id, url_revision, url, updated_at FROM endpoints;

-- GET /deliveries?endpoint_id=...&sequence=N (an extension): an ordered endpoint's delivery by its Svc-Sequence.
-- Partial: deliveries of endpoints that never ordered have no number and add nothing.
CREATE INDEX deliveries_endpoint_sequence_idx ON deliveries (endpoint_id, sequence) WHERE sequence IS NOT NULL;
