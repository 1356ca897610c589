import type { DataSource } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { invalidField } from '../common/errors.js';
import { reader } from '../common/transaction.js';
import { parseWindow } from '../common/window.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { AnalyticsQuery } from './analytics.inputs.js';
import { analyticsRollupJob, nextRollupRun } from './analytics.jobs.js';
import { foldFacts, purgeRollups, sampleGauges, type RollupReport } from './analytics-rollup.js';
import { bucketRange, bucketStart, toBuckets, type AnalyticsView, type HourlyRollup } from './analytics.view.js';

export type AnalyticsScope = 'team' | 'tenant' | 'endpoint' | 'source';

interface AnalyticsRecord {
  tenant_ok: boolean;
  endpoint_ok: boolean;
  source_ok: boolean;
  queue_depth: string | null;
  oldest_due_at: Date | null;
  sampled_at: Date | null;
  hours: (Omit<HourlyRollup, 'hour'> & { hour: string })[] | null;
}

export interface AnalyticsServiceDeps {
  db: DataSource;
  clock: Clock;
  jobs: JobQueue;
}

/**
 * Analytics (docs/analytics.md): reads answer from the hourly rollups of one scope, never from the raw tables;
 * rollUp (the analytics rollup job) folds the facts the transitions appended and samples the queue gauges.
 */
export class AnalyticsService {
  constructor(private readonly deps: AnalyticsServiceDeps) {}

  /**
   * GET /analytics: the buckets overlapping the window for the most specific filter given (endpoint, then source,
   * then tenant, else the team), with the scope's current queue gauges. One round trip: the filters' ownership, the
   * latest gauge sample and at most 31 days of hourly rollups.
   */
  async getAnalytics(ctx: CallContext, query: AnalyticsQuery): Promise<AnalyticsView> {
    const teamId = ctx.actor.teamId;
    const window = parseWindow(query, this.deps.clock.now());
    const [scope, scopeId] = scopeOf(teamId, query);
    const { from, to } = bucketRange(window.after, window.before, query.bucket);
    const [row]: AnalyticsRecord[] = await reader(this.deps.db, ctx).query(
      `SELECT ($2::text IS NULL OR EXISTS (SELECT 1 FROM tenants WHERE id = $2 AND team_id = $1)) AS tenant_ok,
              ($3::text IS NULL OR EXISTS (SELECT 1 FROM endpoints WHERE id = $3 AND team_id = $1)) AS endpoint_ok,
              ($4::text IS NULL OR EXISTS (SELECT 1 FROM sources WHERE id = $4 AND team_id = $1)) AS source_ok,
              g.queue_depth, g.oldest_due_at, g.sampled_at,
              (SELECT json_agg(h ORDER BY h.hour) FROM (
                 SELECT hour, admitted_messages, ingest_bytes, deliveries, attempts, succeeded, failed, expired, canceled,
                        duplicates, rejected_auth, throttled, queue_depth, oldest_due_age_seconds
                   FROM analytics_hourly
                  WHERE scope = $5 AND scope_id = $6 AND team_id = $1 AND hour >= $7 AND hour < $8) h) AS hours
         FROM (SELECT 1) one
         LEFT JOIN analytics_gauges g ON g.scope = $5 AND g.scope_id = $6 AND g.team_id = $1`,
      [teamId, query.tenant_id ?? null, query.endpoint_id ?? null, query.source_id ?? null, scope, scopeId, from, to],
    );
    const record = row!;
    // A filter naming another team's resource (or none) is a bad parameter, not a missing resource: 422, named.
    if (!record.endpoint_ok) throw invalidField('endpoint_id', 'endpoint_id is not an endpoint of this team');
    if (!record.source_ok) throw invalidField('source_id', 'source_id is not a source of this team');
    if (!record.tenant_ok) throw invalidField('tenant_id', 'tenant_id is not a tenant of this team');
    const hours: HourlyRollup[] = (record.hours ?? []).map((h) => ({ ...h, hour: new Date(h.hour) }));
    return {
      bucket: query.bucket,
      createdAfter: window.after,
      createdBefore: window.before,
      rows: toBuckets(hours, window.after, window.before, query.bucket),
      queue_depth: Number(record.queue_depth ?? 0),
      oldest_due_age_seconds:
        record.oldest_due_at && record.sampled_at
          ? Math.max(0, Math.floor((record.sampled_at.getTime() - record.oldest_due_at.getTime()) / 1000))
          : 0,
    };
  }

  /**
   * The rollup job's work: fold every committed fact into the hourly rollups (small batches, short transactions),
   * sample the queue gauges into the current hour, and delete rollups past retention.
   */
  async rollUp(): Promise<RollupReport> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const facts = await foldFacts(db);
    const sampledScopes = await sampleGauges(db, now, bucketStart(now, 'hour'));
    const purged = await purgeRollups(db, now);
    return { facts, sampledScopes, purged };
  }

  /** Queues the rollup of the next interval (once, whoever asks: see nextRollupRun). */
  async scheduleNextRollup(): Promise<void> {
    const { db, clock, jobs } = this.deps;
    const next = nextRollupRun(clock.now());
    await jobs.send(db.manager, analyticsRollupJob, [{ payload: {}, ...next }]);
  }
}

/** The most specific filter given wins: endpoint, then source, then tenant; none means the team. */
function scopeOf(teamId: string, query: AnalyticsQuery): [AnalyticsScope, string] {
  if (query.endpoint_id !== undefined) return ['endpoint', query.endpoint_id];
  if (query.source_id !== undefined) return ['source', query.source_id];
  if (query.tenant_id !== undefined) return ['tenant', query.tenant_id];
  return ['team', teamId];
}
