-- Fair, deployment-wide delivery slots (docs/delivery.md, "Fairness"). Each live worker process has one row: the
-- attempts it holds (`in_use`, written by its own claims), how many teams have work on it (`teams`) and whether work
-- of its waited for a slot at its last claim (`starved`). Every claim locks all rows (FOR UPDATE, in ID order), so
-- claims across workers take slots one after another and service_concurrency holds exactly across any number of
-- workers; settlements never write here (a worker's next claim, or a report when it goes idle, writes its count).
-- A dead worker's row (no heartbeat) does not count; it is deleted when the worker is forgotten.
CREATE TABLE dispatch_slots (
  worker_id  text PRIMARY KEY,
  in_use     integer NOT NULL DEFAULT 0,
  teams      integer NOT NULL DEFAULT 0,
  starved    boolean NOT NULL DEFAULT false
);
