import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import type { Analytics, AnalyticsBucket } from './analytics.types';

const AnalyticsQuery = graphql(`
  query Analytics(
    $createdAfter: DateTimeISO!
    $createdBefore: DateTimeISO!
    $bucket: AnalyticsBucket
    $tenantId: ID
    $endpointId: ID
    $sourceId: ID
  ) {
    analytics(
      createdAfter: $createdAfter
      createdBefore: $createdBefore
      bucket: $bucket
      tenantId: $tenantId
      endpointId: $endpointId
      sourceId: $sourceId
    ) {
      bucket
      createdAfter
      createdBefore
      queueDepth
      oldestDueAgeSeconds
      rows {
        start
        admittedMessages
        ingestBytes
        deliveries
        attempts
        succeeded
        failed
        expired
        canceled
        duplicates
        rejectedAuth
        throttled
        queueDepth
        oldestDueAgeSeconds
      }
    }
  }
`);

export interface AnalyticsScope {
  tenantId: string;
  endpointId: string;
  sourceId: string;
}

/** Counts of the team, or of the most specific scope given (endpoint, then source, then tenant), per bucket. */
export async function getAnalytics(
  window: { createdAfter: string; createdBefore: string },
  bucket: AnalyticsBucket,
  scope: AnalyticsScope,
): Promise<Analytics> {
  const data = await consoleRequest(
    AnalyticsQuery,
    // Absent scopes are left out: the API treats an explicit null as a value to check.
    { ...window, bucket, ...Object.fromEntries(Object.entries(scope).filter(([, value]) => value !== '')) },
  );
  return data.analytics;
}
