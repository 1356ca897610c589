-- Endpoint health lives in endpoint_health (written by the engine on every attempt), apart from the configuration
-- row, so a PATCH never contends with deliveries. Endpoints created since 0005 get their health and queue rows
-- here; from now on creating an endpoint inserts both in the same transaction.

INSERT INTO endpoint_health (endpoint_id) SELECT id FROM endpoints ON CONFLICT (endpoint_id) DO NOTHING;
INSERT INTO endpoint_queue_counts (endpoint_id) SELECT id FROM endpoints ON CONFLICT (endpoint_id) DO NOTHING;

ALTER TABLE endpoints
  DROP COLUMN circuit,
  DROP COLUMN consecutive_failures,
  DROP COLUMN last_success_at,
  DROP COLUMN last_failure_at,
  DROP COLUMN next_probe_at;
