-- Operating it (issue 18): what /metrics and the admin CLI need.

-- svc_endpoint_circuits reads only the endpoints whose circuit is not closed (few, normally none), at every scrape.
-- Attempts that leave the circuit as it was stay HOT updates: the index changes only when the circuit does.
CREATE INDEX endpoint_health_not_closed_idx ON endpoint_health (circuit) WHERE circuit <> 'closed';

-- A key's label, set by the operator (admin CLI) so that key lists and usage reports can name a key.
ALTER TABLE api_keys ADD COLUMN label text CHECK (label IS NULL OR length(label) BETWEEN 1 AND 100);
