-- Usage and metering (docs/usage.md): a rollup of the charges ledger per paying key, billing month, meter and rate
-- version, moved by the charge statement itself, and the closing of billing months.

-- Moved in the statement that writes the ledger rows (BillingService.charge), under the key's spend row lock, so
-- it equals the ledger at every commit. GET /meta/usage reads a few rows per key of the team (api_keys_team_idx, then
-- this primary key) instead of summing the month's ledger rows.
CREATE TABLE key_monthly_meter_usage (
  key_id        text NOT NULL REFERENCES api_keys(id),
  billing_month date NOT NULL,
  meter         text NOT NULL,
  rate_version  text NOT NULL,
  units         bigint NOT NULL CHECK (units >= 0),
  amount_micros bigint NOT NULL CHECK (amount_micros >= 0),
  charge_rows   bigint NOT NULL CHECK (charge_rows >= 0),
  PRIMARY KEY (key_id, billing_month, meter, rate_version)
);

-- Charges made before this migration: the rollup starts equal to the ledger.
INSERT INTO key_monthly_meter_usage (key_id, billing_month, meter, rate_version, units, amount_micros, charge_rows)
SELECT key_id, billing_month, meter, rate_version, sum(units), sum(amount_micros), count(*)
  FROM charges
 GROUP BY key_id, billing_month, meter, rate_version;

-- A closed month takes no more charges: the charge's upsert refuses a closed spend row (and the charge moves to the
-- month the clock is in now). limit_at_close_micros is the key's spending limit when its month closed.
ALTER TABLE key_monthly_spend
  ADD COLUMN closed boolean NOT NULL DEFAULT false,
  ADD COLUMN limit_at_close_micros bigint;
CREATE INDEX key_monthly_spend_open_idx ON key_monthly_spend (billing_month) WHERE NOT closed;

-- One row per team and closed month: when it closed, the rates in force then and its frozen total. The month's
-- per key and meter lines are its key_monthly_meter_usage rows, which no charge can move once it is closed.
CREATE TABLE billing_month_statements (
  team_id       text NOT NULL REFERENCES teams(id),
  billing_month date NOT NULL,
  rate_version  text NOT NULL,
  total_micros  bigint NOT NULL CHECK (total_micros >= 0),
  closed_at     timestamptz NOT NULL,
  PRIMARY KEY (team_id, billing_month)
);
