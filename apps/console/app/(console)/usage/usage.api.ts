import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import type { Usage } from './usage.types';

const METER_FIELDS = 'meter rateVersion unit units totalUsd';

/** The team's usage by meter and by paying key in `month` (YYYY-MM), or the current month when null. */
export async function getUsage(month: string | null): Promise<Usage> {
  const data = await consoleRequest<{ usage: Usage }>(
    `query Usage($month: String) {
      usage(month: $month) {
        month status closedAt period { start end } currency rateVersion totalUsd
        meters { ${METER_FIELDS} }
        keys { keyId label spendingLimitUsd spentUsd remainingUsd meters { ${METER_FIELDS} } }
      }
    }`,
    month ? { month } : {},
  );
  return data.usage;
}
