-- Retention and maintenance (issue 17, sections 0, 5 and 6).

-- A redaction erases the body's SHA-256 with the body: for a guessable body (a card number) the hash would confirm a
-- guess. Messages redacted before this migration lose theirs now.
ALTER TABLE messages ALTER COLUMN body_sha256 DROP NOT NULL;
UPDATE messages SET body_sha256 = NULL WHERE redacted_at IS NOT NULL;

-- The txid feeds 0005 prepared were never read (lists page by (created_at, id); 0009 dropped their indexes), yet
-- every insert filled them. operational_events.txid stays: GET /events pages by it.
ALTER TABLE messages DROP COLUMN txid;
ALTER TABLE deliveries DROP COLUMN txid;

-- Redaction completion without a VACUUM of whole tables every 5 minutes (docs/retention.md): once no snapshot can
-- see a redaction's old row versions, the sweep notes how many vacuums (manual or autovacuum) each table that held
-- them has completed; two more of each prove one started after that moment and removed them.
ALTER TABLE messages ADD COLUMN redaction_vacuum_baseline jsonb;
