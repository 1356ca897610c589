import type { DataSource } from 'typeorm';
import { refusalFactSql, type RefusalScope } from '../analytics/analytics-facts.js';
import { BURSTS, type Limits } from '../catalog/limits.js';
import type { Clock } from '../common/clock.js';
import { ServiceError } from '../common/errors.js';
import type { Metrics } from '../metrics/metrics.js';

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

/** How long a process may keep leased tokens; what it has not spent by then goes back with its next lease. */
export const LEASE_MS = 1_000;
/** A lease holds at most this share of a bucket's burst: the most a process can spend past the bucket (per bucket). */
const LEASE_SHARE_OF_BURST = 10;
/** Past this many buckets in memory, the idle ones are forgotten (their unspent tokens expire). */
const MAX_LEASES = 50_000;

/**
 * Refills the bucket, gives back $7 expired tokens and grants up to $6, in one statement. $8 requests are waiting:
 * the ones left without a token are refused and, when the caller says whom they count for ($9 is then set),
 * counted as throttled in analytics, with $12 more that this process refused without asking (an empty bucket).
 * Answers what was granted and the tokens left (below 1: the bucket is empty).
 */
const LEASE_SQL = `
  WITH took AS (
    INSERT INTO rate_limit_buckets AS b (team_id, bucket, tokens, updated_at, granted)
    VALUES ($1, $2, $3 - LEAST($6, floor($3)), $5, LEAST($6, floor($3)))
    ON CONFLICT (team_id, bucket) DO UPDATE
      SET (tokens, granted, updated_at) = (
        SELECT x.available - LEAST($6, floor(x.available)), LEAST($6, floor(x.available)), GREATEST(b.updated_at, $5)
          FROM (SELECT LEAST($3, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($5 - b.updated_at))) * $4 + $7)
                  AS available) x)
      WHERE LEAST($3, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($5 - b.updated_at))) * $4 + $7) >= 1
    RETURNING b.granted, b.tokens),
  refused AS (${refusalFactSql(
    'throttled',
    { teamId: '$9', tenantId: '$10', sourceId: '$11', at: '$5' },
    '$9::text IS NOT NULL AND GREATEST(0, $8::int - coalesce((SELECT granted FROM took), 0)) + $12::int > 0',
    'GREATEST(0, $8::int - coalesce((SELECT granted FROM took), 0)) + $12::int',
  )})
  SELECT coalesce((SELECT granted FROM took), 0) AS granted,
         coalesce((SELECT tokens FROM took),
                  (SELECT LEAST($3, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM ($5 - b.updated_at))) * $4)
                     FROM rate_limit_buckets b WHERE b.team_id = $1 AND b.bucket = $2)) AS tokens_left`;

export interface BucketSpec {
  /** Tokens added per second. */
  rate: number;
  burst: number;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** This process's share of one bucket: tokens taken from Postgres and not spent yet, and requests waiting for more. */
interface Lease {
  tokens: number;
  takenAt: number;
  expiresAt: number;
  /** How many tokens beyond the waiting requests the next lease asks for (grows while demand uses leases up). */
  prefetch: number;
  waiters: Waiter[];
  refilling: boolean;
  /**
   * Until when (ms) the bucket cannot hold a whole token, as the last chunk statement found it empty: requests are
   * refused here without a statement (tokens other processes give back meanwhile wait for the next one).
   */
  emptyUntil: number;
  /** Refusals made here without a statement, still to be counted as throttled (with the next one, or a flush). */
  refusedHere: number;
  flushTimer: NodeJS.Timeout | null;
}

/**
 * Per-team token buckets kept in Postgres, so the limits hold across every server process. A process does not
 * write the bucket per request: it takes tokens in chunks (one statement refills the bucket and takes a chunk),
 * spends them in memory, and gives back what it has not spent within LEASE_MS with its next chunk (or lets it
 * expire). Requests that find no token wait for one chunk statement together. Every token spent was taken from the
 * bucket, so over any window a bucket admits at most its burst plus its rate times the window plus the tokens
 * other processes held at the window's start: at most a tenth of the burst per process (docs/admission.md).
 */
export class RateLimitService {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly limits: Limits,
    /** Counts refused admissions and captures (svc_admission_refusals_total{reason="rate_limited"}). */
    private readonly metrics?: Metrics,
  ) {}

  /**
   * Forgets this process's leases without giving their tokens back: for whoever sets a bucket in SQL (a test
   * emptying it) and needs the next request to read the bucket. Requests already waiting for a chunk still get it.
   */
  forgetLeases(): void {
    for (const [key, lease] of this.leases) if (!lease.refilling) this.leases.delete(key);
  }

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

  /**
   * A receivers' portal session's tokens of one kind: from its own bucket of that kind, at its team's rates, never from
   * the team's (docs/portal.md, "Rate limits"). Busy portals cannot spend the operator's rate, nor one tenant's
   * portal another's. A refused admission counts as throttled for the team, as the team's own would.
   */
  takeForPortalSession(teamId: string, sessionId: string, rateClass: Exclude<RateClass, 'source'>): Promise<void> {
    const bucket = BUCKETS[rateClass];
    const counted = rateClass === 'admission' ? { teamId, tenantId: null, sourceId: null } : undefined;
    return this.take(sessionId, rateClass, { rate: this.limits[bucket.limit].value, burst: bucket.burst }, counted);
  }

  /** `counted`: who a refusal counts for as throttled in analytics (in the lease statement, no extra round trip). */
  take(teamId: string, bucket: string, spec: BucketSpec, counted?: RefusalScope): Promise<void> {
    const key = `${teamId}\u0000${bucket}`;
    let lease = this.leases.get(key);
    if (!lease) {
      if (this.leases.size >= MAX_LEASES) this.forgetIdleLeases();
      lease = {
        tokens: 0,
        takenAt: 0,
        expiresAt: 0,
        prefetch: 0,
        waiters: [],
        refilling: false,
        emptyUntil: 0,
        refusedHere: 0,
        flushTimer: null,
      };
      this.leases.set(key, lease);
    }
    if (lease.waiters.length === 0 && lease.tokens >= 1 && this.isCurrent(lease)) {
      lease.tokens -= 1;
      return Promise.resolve();
    }
    // An empty bucket stays empty until it has refilled a whole token: a client hammering it (a hot or hostile team
    // retrying its 429s) costs no statement before then.
    if (lease.waiters.length === 0 && !lease.refilling && this.clock.now().getTime() < lease.emptyUntil)
      return this.refuseHere(lease, teamId, bucket, spec, counted);
    const waiting = new Promise<void>((resolve, reject) => lease.waiters.push({ resolve, reject }));
    if (!lease.refilling) {
      lease.refilling = true;
      // Takes of the same tick join the first chunk.
      queueMicrotask(() => void this.refill(lease, teamId, bucket, spec, counted));
    }
    return waiting;
  }

  private refuseHere(
    lease: Lease,
    scope: string,
    bucket: string,
    spec: BucketSpec,
    counted: RefusalScope | undefined,
  ): Promise<void> {
    if (counted) {
      this.metrics?.admissionRefusals.inc({ reason: 'rate_limited' });
      lease.refusedHere += 1;
      // Counted with the next chunk statement, or by this flush if none comes by the time a token can exist.
      lease.flushTimer ??= setTimeout(
        () => {
          lease.flushTimer = null;
          if (lease.refusedHere > 0 && !lease.refilling)
            void this.lease(scope, bucket, spec, 0, 0, 0, counted, this.clock.now(), lease).catch(() => undefined);
        },
        Math.max(1, lease.emptyUntil - this.clock.now().getTime()),
      );
      lease.flushTimer.unref();
    }
    return Promise.reject(refusal(spec));
  }

  private isCurrent(lease: Lease): boolean {
    const now = this.clock.now().getTime();
    return now >= lease.takenAt && now < lease.expiresAt;
  }

  /** Serves the waiting requests with new chunks until none waits; one statement per chunk. */
  private async refill(
    lease: Lease,
    scope: string,
    bucket: string,
    spec: BucketSpec,
    counted: RefusalScope | undefined,
  ): Promise<void> {
    try {
      while (lease.waiters.length > 0) {
        const waiters = lease.waiters.splice(0);
        const now = this.clock.now();
        const current = this.isCurrent(lease);
        // Leased tokens still current serve first; expired ones go back to the bucket with this chunk.
        const fromLease = current ? Math.min(Math.floor(lease.tokens), waiters.length) : 0;
        for (const waiter of waiters.splice(0, fromLease)) waiter.resolve();
        lease.tokens -= fromLease;
        if (waiters.length === 0) continue;
        const giveBack = current ? 0 : Math.floor(lease.tokens);
        lease.tokens = 0;
        // A lease used up within its time means steady demand: ask for more next time; an idle bucket asks for
        // just what is waiting.
        const maxChunk = Math.max(1, Math.floor(spec.burst / LEASE_SHARE_OF_BURST));
        lease.prefetch = current ? Math.min(maxChunk, Math.max(1, lease.prefetch * 2)) : 0;
        const want = waiters.length + lease.prefetch;
        let granted: number;
        try {
          granted = await this.lease(scope, bucket, spec, want, giveBack, waiters.length, counted, now, lease);
        } catch (error) {
          for (const waiter of waiters) waiter.reject(error);
          continue;
        }
        lease.tokens = Math.max(0, granted - waiters.length);
        lease.takenAt = now.getTime();
        lease.expiresAt = now.getTime() + LEASE_MS;
        const served = Math.min(granted, waiters.length);
        for (const waiter of waiters.slice(0, served)) waiter.resolve();
        const refused = refusal(spec);
        for (const waiter of waiters.slice(served)) waiter.reject(refused);
        // Admissions and captures (the refusals analytics counts as throttled) are admission refusals too.
        if (counted && waiters.length > served)
          this.metrics?.admissionRefusals.inc({ reason: 'rate_limited' }, waiters.length - served);
      }
    } finally {
      lease.refilling = false;
    }
  }

  /**
   * One statement: refill, give back, take up to `want`, count the refusals made here since the last one; answers how
   * many were granted, and notes on the lease until when an empty bucket stays empty.
   */
  private async lease(
    scope: string,
    bucket: string,
    spec: BucketSpec,
    want: number,
    giveBack: number,
    waiting: number,
    counted: RefusalScope | undefined,
    now: Date,
    lease: Lease,
  ): Promise<number> {
    const refusedHere = counted ? lease.refusedHere : 0;
    lease.refusedHere -= refusedHere;
    const rows: { granted: number; tokens_left: number | string | null }[] = await this.db
      .query(LEASE_SQL, [
        scope,
        bucket,
        spec.burst,
        spec.rate,
        now,
        want,
        giveBack,
        waiting,
        counted?.teamId ?? null,
        counted?.tenantId ?? null,
        counted?.sourceId ?? null,
        refusedHere,
      ])
      .catch((error: unknown) => {
        lease.refusedHere += refusedHere; // counted with the next statement
        throw error;
      });
    const granted = Number(rows[0]?.granted ?? 0);
    const left = Number(rows[0]?.tokens_left ?? spec.burst);
    // Below a whole token: none can exist before the rest of one has refilled.
    lease.emptyUntil = left < 1 ? now.getTime() + Math.ceil(((1 - Math.max(0, left)) / spec.rate) * 1000) : 0;
    return granted;
  }

  private forgetIdleLeases(): void {
    for (const [key, lease] of this.leases)
      if (lease.waiters.length === 0 && !lease.refilling && !this.isCurrent(lease) && lease.refusedHere === 0)
        this.leases.delete(key);
  }
}

function refusal(spec: BucketSpec): ServiceError {
  return new ServiceError('rate_limited', 'too many requests; retry after the time in Retry-After', {
    retryAfter: Math.max(1, Math.ceil(1 / spec.rate)),
  });
}
