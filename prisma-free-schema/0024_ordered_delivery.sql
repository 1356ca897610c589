-- Ordered delivery per endpoint (issue 20, part 1; docs/delivery.md, "Ordered endpoints").
--
-- ordering: 'none' (every delivery on its own, up to max_concurrency at once) or 'ordered' (one at a time, in the
-- order the messages were admitted). ordering_on_failure: what a delivery that ends without success does to an
-- ordered endpoint: 'continue' (it is a dead letter and the next goes) or 'hold' (the endpoint is paused).
ALTER TABLE endpoints
  ADD COLUMN ordering text NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'ordered')),
  ADD COLUMN ordering_on_failure text NOT NULL DEFAULT 'continue' CHECK (ordering_on_failure IN ('continue', 'hold'));

-- The next sequence number of an endpoint that is (or was) ordered. Admission takes numbers here in the
-- transaction that admits the deliveries; the row lock is held until commit, so numbers follow commit order (the
-- same way subscription events are numbered). Only ordered endpoints have a row that admission moves (`ordered`),
-- so an endpoint that never orders costs one index probe and no lock. A row stays when ordering is switched off,
-- so numbers never restart.
CREATE TABLE endpoint_sequences (
  endpoint_id   text PRIMARY KEY REFERENCES endpoints(id),
  ordered       boolean NOT NULL,
  next_sequence bigint NOT NULL DEFAULT 1
);

-- A delivery's number in its endpoint's order (sent as Svc-Sequence); null on endpoints that do not order.
ALTER TABLE deliveries ADD COLUMN sequence bigint;
ALTER TABLE delivery_queue ADD COLUMN sequence bigint;
-- An ordered endpoint's head: its waiting row with the lowest number. Partial: rows of other endpoints add nothing.
CREATE INDEX delivery_queue_endpoint_sequence_idx ON delivery_queue (endpoint_id, sequence) WHERE sequence IS NOT NULL;

-- The extension event type webhooks.endpoint.held: an ordered endpoint that holds on failure was paused.
ALTER TABLE operational_events DROP CONSTRAINT operational_events_type_check;
ALTER TABLE operational_events ADD CONSTRAINT operational_events_type_check CHECK (type IN (
  'webhooks.delivery.failed', 'webhooks.delivery.expired', 'webhooks.endpoint.disabled',
  'webhooks.endpoint.recovered', 'webhooks.endpoint.failing', 'webhooks.endpoint.held', 'webhooks.source.rejected',
  'webhooks.replay.completed', 'webhooks.replay.failed', 'webhooks.budget.blocked'));
