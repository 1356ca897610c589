-- A failing endpoint is announced (issue 20, part 3; docs/delivery.md, "The life of a failing endpoint").
--
-- The last error an endpoint's attempts got (http_500, timeout, ...), written with the health row's transitions
-- only (the settlement statement already writes the row then) and kept after a success, so the recovered event
-- and the console can say what the endpoint recovered from.
ALTER TABLE endpoint_health ADD COLUMN last_error text;

-- The extension event type webhooks.endpoint.failing: the circuit opened (docs/events.md).
ALTER TABLE operational_events DROP CONSTRAINT operational_events_type_check;
ALTER TABLE operational_events ADD CONSTRAINT operational_events_type_check CHECK (type IN (
  'webhooks.delivery.failed', 'webhooks.delivery.expired', 'webhooks.endpoint.disabled',
  'webhooks.endpoint.recovered', 'webhooks.endpoint.failing', 'webhooks.source.rejected',
  'webhooks.replay.completed', 'webhooks.replay.failed', 'webhooks.budget.blocked'));
