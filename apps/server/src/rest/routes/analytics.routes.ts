import { z } from 'zod';
import {
  ANALYTICS_BUCKETS,
  AnalyticsQuery,
  parseInput,
  RawJson,
  type AnalyticsRow,
  type AnalyticsView,
  type Services,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape, queryOf, timestamp } from '../shapes.js';

const count = (description: string) => z.number().int().min(0).describe(description);

export const AnalyticsRowShape = z
  .strictObject({
    start: timestamp.describe('Start of the UTC hour or day; the bucket covers all of it, even past the window'),
    admitted_messages: count('Messages accepted (API, endpoint tests, source captures)'),
    ingest_bytes: count('Bytes of the accepted message bodies'),
    deliveries: count('Delivery generations created: originals at acceptance, replays when created'),
    attempts: count('HTTP requests made to receivers, by when they started'),
    succeeded: count('Deliveries that finished succeeded'),
    failed: count('Deliveries that finished failed (dead letters)'),
    expired: count('Deliveries that finished expired (dead letters)'),
    canceled: count('Deliveries that finished canceled'),
    duplicates: count('Source captures answered as duplicates of an earlier one'),
    rejected_auth: count('Source captures refused because they did not verify'),
    throttled: count('Admissions and captures refused with 429 rate_limited'),
    queue_depth: count('Pending deliveries (queued, in flight, retry wait) at the last sample of the bucket'),
    oldest_due_age_seconds: count(
      'At the last sample of the bucket: how long the oldest due delivery had been waiting (0 when none)',
    ),
  })
  .meta({ id: 'AnalyticsRow', description: 'One hour or day of one scope' });

const AnalyticsShape = z
  .strictObject({
    bucket: z.enum(ANALYTICS_BUCKETS),
    created_after: timestamp,
    created_before: timestamp,
    data: z
      .array(AnalyticsRowShape)
      .describe('Every bucket overlapping the window, oldest first, with zeros where nothing happened'),
    queue_depth: count('Pending deliveries of the scope now (the latest sample, at most about 20 s old)'),
    oldest_due_age_seconds: count(
      'How long the oldest due delivery of the scope has been waiting (the latest sample; 0 when none)',
    ),
  })
  .meta({
    id: 'Analytics',
    description: 'Counts by transition time, eventually consistent within about a minute; never a billing record',
  });

function renderRow(row: AnalyticsRow): z.infer<typeof AnalyticsRowShape> {
  return { ...row, start: row.start.toISOString() };
}

export function renderAnalytics(view: AnalyticsView): z.infer<typeof AnalyticsShape> {
  return {
    bucket: view.bucket,
    created_after: view.createdAfter.toISOString(),
    created_before: view.createdBefore.toISOString(),
    data: view.rows.map(renderRow),
    queue_depth: view.queue_depth,
    oldest_due_age_seconds: view.oldest_due_age_seconds,
  };
}

export function analyticsRoutes(services: Services): RouteSpec[] {
  const { analytics } = services;
  return [
    defineRoute({
      operationId: 'getAnalytics',
      summary: 'Hourly or daily counts of the team, a tenant, an endpoint or a source, with the current queue',
      method: 'GET',
      path: '/analytics',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(AnalyticsQuery, {
        created_after: 'Required; inclusive',
        created_before: 'Required; exclusive; at most 30 days after created_after',
        bucket: 'hour (default) or day, aligned to UTC',
        tenant_id: "This tenant's counts (unless endpoint_id or source_id is given)",
        endpoint_id: "This endpoint's counts (the most specific filter wins)",
        source_id: "This source's counts (unless endpoint_id is given)",
      }),
      responses: { 200: AnalyticsShape, 422: ErrorShape },
      async handler({ ctx, query }) {
        const view = await analytics.getAnalytics(ctx, parseInput(AnalyticsQuery, query));
        // Plain data of up to 721 buckets: the native serializer is several times faster than the generic
        // renderer (which exists for RawJson leaves this body has none of).
        return { status: 200, body: new RawJson(JSON.stringify(renderAnalytics(view))) };
      },
    }),
  ];
}
