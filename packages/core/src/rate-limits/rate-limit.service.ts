import type { DataSource } from 'typeorm';
import { refusalFactSql, type RefusalScope } from '../analytics/analytics-facts.js';
import { BURSTS, type Limits } from '../catalog/limits.js';
import type { Clock } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';

/**
 * The kinds of request a team is limited on, each its own bucket: reads, configuration writes, message admission
 * (POST /messages and endpoint tests) and source captures (POST /receive, per source).
 */
export type RateClass = 'read' | 'config_write' | 'admission' | 'source';

const BUCKETS = {
  read: { limit: 'read_requests_per_second', burst: BURSTS.read_requests_per_second },
  config_write: { limit: 'config_writes_per_second', burst: BURSTS.config_writes_per_second },
  admission: { limit: 'admission_rate', burst: BURSTS.admission_rate },
  source: { limit: 'source_requests_per_second', burst: BURSTS.source_requests_per_second },
} as const;

/** A refused request is a throttled fact when the caller says whom it counts for ($6 is then set). */
const THROTTLED_FACT = refusalFactSql(
  'throttled',
  { teamId: '$6', tenantId: '$7', sourceId: '$8', at: '$5' },
  '$6::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM took)',
);

export interface BucketSpec {
  /** Tokens added per second. */
  rate: number;
  burst: number;
}

/**
 * Per-team token buckets kept in Postgres, so the limits hold across every server process.
 * One statement refills and takes a token atomically.
 */
export class RateLimitService {
  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly limits: Limits,
  ) {}

  /**
   * One token from the bucket of this kind of request; `scope` is the team, or the source for captures. A refused
   * admission or capture is counted as throttled in analytics: for the team (`scope`), or for `source` (its team,
   * tenant and itself).
   */
  takeFor(scope: string, rateClass: RateClass, source?: RefusalScope): Promise<void> {
    const bucket = BUCKETS[rateClass];
    const counted =
      rateClass === 'admission'
        ? { teamId: scope, tenantId: null, sourceId: null }
        : rateClass === 'source'
          ? source
          : undefined;
    return this.take(scope, rateClass, { rate: this.limits[bucket.limit].value, burst: bucket.burst }, counted);
  }

  /** `counted`: who a refusal counts for as throttled in analytics (in the same statement, no extra round trip). */
  async take(teamId: string, bucket: string, spec: BucketSpec, counted?: RefusalScope): Promise<void> {
    const now = this.clock.now();
    const rows: unknown[] = await this.db.query(
      `WITH took AS (
         INSERT INTO rate_limit_buckets AS b (team_id, bucket, tokens, updated_at)
         VALUES ($1, $2, $3 - 1, $5)
         ON CONFLICT (team_id, bucket) DO UPDATE
           SET tokens = LEAST($3, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($5 - b.updated_at))) * $4) - 1,
               updated_at = GREATEST(b.updated_at, $5)
           WHERE LEAST($3, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($5 - b.updated_at))) * $4) >= 1
         RETURNING 1),
       refused AS (${THROTTLED_FACT})
       SELECT 1 FROM took`,
      [
        teamId,
        bucket,
        spec.burst,
        spec.rate,
        now,
        counted?.teamId ?? null,
        counted?.tenantId ?? null,
        counted?.sourceId ?? null,
      ],
    );
    if (rows.length === 0)
      throw new ServiceError('rate_limited', 'too many requests; retry after the time in Retry-After', {
        retryAfter: Math.max(1, Math.ceil(1 / spec.rate)),
      });
  }
}
