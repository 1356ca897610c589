import { z } from 'zod';
import { idOf } from '../common/validation.js';

const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });

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
  tenant_id: idOf('tenant').optional(),
  endpoint_id: idOf('endpoint').optional(),
  source_id: idOf('source').optional(),
});
export type AnalyticsQuery = z.output<typeof AnalyticsQuery>;
