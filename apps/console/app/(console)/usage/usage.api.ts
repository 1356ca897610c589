import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import type { Usage } from './usage.types';

graphql(`
  fragment MeterUsageFields on MeterUsage {
    meter
    rateVersion
    unit
    units
    totalUsd
  }
`);

const UsageQuery = graphql(`
  query Usage($month: String) {
    usage(month: $month) {
      month
      status
      closedAt
      period {
        start
        end
      }
      currency
      rateVersion
      totalUsd
      days {
        day
        totalUsd
      }
      meters {
        ...MeterUsageFields
      }
      keys {
        keyId
        label
        spendingLimitUsd
        spentUsd
        remainingUsd
        meters {
          ...MeterUsageFields
        }
      }
    }
  }
`);

/** The team's usage by meter and by paying key in `month` (YYYY-MM), or the current month when null. */
export async function getUsage(month: string | null): Promise<Usage> {
  const data = await consoleRequest(UsageQuery, month ? { month } : {});
  return data.usage;
}
