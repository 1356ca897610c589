-- Why an attempt without an HTTP answer failed, beyond its error_kind (docs/deliveries.md, "Why an attempt failed"):
-- the phase (dns, connect, tls, request, response), a cause, the error code, the address connected to or refused and
-- the phase timings. Written by settlement for attempts that got no answer; null for answered attempts and for
-- attempts made before this migration. Codes and measurements only: no header values, no URL, no secret.
ALTER TABLE attempts ADD COLUMN error_detail jsonb;
