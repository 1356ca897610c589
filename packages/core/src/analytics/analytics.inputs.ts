import { z } from 'zod';

const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });
const idFilter = z.string().regex(/^[a-z]+_[0-9a-z]{1,60}$/, 'must be an ID');

export const ANALYTICS_BUCKETS = ['hour', 'day'] as const;
export type AnalyticsBucket = (typeof ANALYTICS_BUCKETS)[number];

/**
 * GET /analytics. Both times are required: created_after inclusive, created_before exclusive, at most 30 days
 * apart. The most specific filter wins: endpoint_id, then source_id, then tenant_id; none means the whole team.
 */
export const AnalyticsQuery = z.strictObject({
  created_after: timestamp,
  created_before: timestamp,
  bucket: z.enum(ANALYTICS_BUCKETS, { message: 'must be hour or day' }).default('hour'),
  tenant_id: idFilter.optional(),
  endpoint_id: idFilter.optional(),
  source_id: idFilter.optional(),
});
export type AnalyticsQuery = z.output<typeof AnalyticsQuery>;
