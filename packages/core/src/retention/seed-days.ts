import type { DataSource } from 'typeorm';
import { DAY } from '../common/clock.js';
import { RATE_VERSION } from '../catalog/catalog.js';

/** Where seeded traffic belongs: a team with its key, a tenant and an endpoint. */
export interface SeedTarget {
  teamId: string;
  keyId: string;
  tenantId: string;
  endpointId: string;
}

export interface SeedDayOptions {
  /** Messages of the day, each with its content, one succeeded delivery and one attempt (four rows). */
  messages: number;
  /** Bytes of each body (and of each delivery's frozen copy when `frozenCopies`). Default 512. */
  bodyBytes?: number;
  /** Content already erased, as retention leaves a day older than payload_retention_days. Default false. */
  erased?: boolean;
  /** Distinguishes the random part of the IDs of two seedings of the same day. Default ''. */
  salt?: string;
}

/** 10 Crockford base32 characters of the milliseconds `ms` (a SQL bigint expression), as newId encodes them. */
const TIME_CHARS = (ms: string) =>
  `(SELECT string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', ((((${ms}) * 4) >> (5 * (9 - k))) & 31)::int + 1, 1),
                      '' ORDER BY k) FROM generate_series(0, 9) AS k)`;

/**
 * A day of stored traffic in one statement (tests of the upgrade to daily partitions, the retention benchmark): IDs
 * with the day's times spread evenly over it, so they sort and partition as the service's own would. Works with the
 * tables partitioned (migration 0041) or not.
 */
export async function seedDay(db: DataSource, target: SeedTarget, day: Date, options: SeedDayOptions): Promise<void> {
  const step = Math.max(1, Math.floor(DAY / options.messages));
  const bytes = options.bodyBytes ?? 512;
  await db.query(
    `WITH g AS (
       SELECT n, $1::bigint + n * $2::bigint AS ms, substr(md5($9 || n::text), 1, 16) AS tail
         FROM generate_series(0, $3::int - 1) AS n),
     ids AS (SELECT n, ms, to_timestamp(ms / 1000.0) AS at, ${TIME_CHARS('ms')} || tail AS key FROM g),
     m AS (
       INSERT INTO messages (id, team_id, tenant_id, event_type, origin, content_type, body_bytes, body_sha256,
                             deliver_at, expires_at, retained_until, paying_key_id, ingest_units, delivery_units,
                             price_micros, rate_version, created_at, content_erased_at)
       SELECT 'wdm_' || key, $4, $5, 'seed.event', 'api', 'application/octet-stream', $8, md5(key) || md5(key), at,
              at + interval '72 hours', at + interval '30 days', $6, 1, 1, 0, $7, at,
              CASE WHEN $10 THEN at + interval '30 days' END
         FROM ids
       RETURNING id),
     c AS (
       INSERT INTO message_contents (message_id, team_id, body, erased_at)
       SELECT 'wdm_' || key, $4, CASE WHEN NOT $10 THEN decode(repeat(md5(key), ($8 + 15) / 16), 'hex') END,
              CASE WHEN $10 THEN at + interval '30 days' END
         FROM ids),
     d AS (
       INSERT INTO deliveries (id, team_id, tenant_id, message_id, endpoint_id, event_type, status, attempt_count,
                               next_attempt_at, expires_at, body_bytes, content_type, delivery_units, last_status_code,
                               last_attempt_at, created_at, updated_at, finished_at)
       SELECT 'wdd_' || key, $4, $5, 'wdm_' || key, $11, 'seed.event', 'succeeded', 1, at, at + interval '72 hours',
              $8, 'application/octet-stream', 1, 200, at, at, at, at
         FROM ids)
     INSERT INTO attempts (id, delivery_id, team_id, endpoint_id, number, trigger, started_at, duration_ms,
                           url_revision, status_code, created_at)
     SELECT 'wda_' || key, 'wdd_' || key, $4, $11, 1, 'scheduled', at, 12, 1, 200, at FROM ids`,
    [
      day.getTime(),
      step,
      options.messages,
      target.teamId,
      target.tenantId,
      target.keyId,
      RATE_VERSION,
      bytes,
      options.salt ?? '',
      options.erased ?? false,
      target.endpointId,
    ],
  );
}
