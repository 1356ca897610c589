import { Arg, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import { AnalyticsQuery, parseInput, type AnalyticsRow as AnalyticsRowView, type AnalyticsView } from '@svc/core';
import { Analytics, type AnalyticsRow } from './analytics.types.js';
import { AnalyticsBucket } from './enums.js';
import { callContext, type GraphqlContext } from './context.js';
import { defined } from './mappers.js';

function toAnalyticsRow(row: AnalyticsRowView): AnalyticsRow {
  return {
    start: row.start,
    admittedMessages: row.admitted_messages,
    ingestBytes: row.ingest_bytes,
    deliveries: row.deliveries,
    attempts: row.attempts,
    succeeded: row.succeeded,
    failed: row.failed,
    expired: row.expired,
    canceled: row.canceled,
    duplicates: row.duplicates,
    rejectedAuth: row.rejected_auth,
    throttled: row.throttled,
    queueDepth: row.queue_depth,
    oldestDueAgeSeconds: row.oldest_due_age_seconds,
  };
}

function toAnalytics(view: AnalyticsView): Analytics {
  return {
    bucket: view.bucket,
    createdAfter: view.createdAfter,
    createdBefore: view.createdBefore,
    rows: view.rows.map(toAnalyticsRow),
    queueDepth: view.queue_depth,
    oldestDueAgeSeconds: view.oldest_due_age_seconds,
  };
}

@Resolver(() => Analytics)
export class AnalyticsResolver {
  @Authorized()
  @Query(() => Analytics, {
    description:
      'Hourly or daily counts of the team, a tenant, an endpoint or a source, with the current queue (GET ' +
      '/analytics). The most specific filter wins: endpointId, then sourceId, then tenantId.',
  })
  async analytics(
    @Ctx() context: GraphqlContext,
    @Arg('createdAfter', () => Date, { description: 'Inclusive' }) createdAfter: Date,
    @Arg('createdBefore', () => Date, { description: 'Exclusive; at most 30 days after createdAfter' })
    createdBefore: Date,
    @Arg('bucket', () => AnalyticsBucket, { nullable: true, description: 'hour (default) or day, aligned to UTC' })
    bucket?: string,
    @Arg('tenantId', () => ID, { nullable: true }) tenantId?: string,
    @Arg('endpointId', () => ID, { nullable: true }) endpointId?: string,
    @Arg('sourceId', () => ID, { nullable: true }) sourceId?: string,
  ): Promise<Analytics> {
    const query = parseInput(
      AnalyticsQuery,
      defined({
        created_after: createdAfter.toISOString(),
        created_before: createdBefore.toISOString(),
        bucket: bucket ?? undefined,
        tenant_id: tenantId ?? undefined,
        endpoint_id: endpointId ?? undefined,
        source_id: sourceId ?? undefined,
      }),
    );
    return toAnalytics(await context.services.analytics.getAnalytics(callContext(context), query));
  }
}
