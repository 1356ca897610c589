-- A claim no longer writes the wide `deliveries` row (docs/delivery.md, "The engine"): an attempt in flight is
-- its queue row's lease, and `deliveries` is written at admission and when an attempt settles. A delivery shows
-- `in_flight` while its queue row is leased; its stored status stays what it was before the claim (queued or
-- retry_wait), and attempt_count counts the attempts that settled (the one in flight is the lease's number).
-- Deliveries an older worker marked in flight go back to the status they had, with their settled count; their
-- queue rows keep their leases, so they still show in flight until the attempt settles or its lease lapses.
UPDATE deliveries
   SET status = CASE WHEN attempt_count > 1 THEN 'retry_wait' ELSE 'queued' END,
       attempt_count = greatest(attempt_count - 1, 0), lease_expires_at = NULL
 WHERE status = 'in_flight';
