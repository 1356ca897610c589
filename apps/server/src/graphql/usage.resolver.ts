import { Arg, Authorized, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { formatUsd, parseInput, UsageQuery, type MeterUsageLine, type UsageReport } from '@svc/core';
import { callContext, type GraphqlContext } from './context.js';
import { defined } from './mappers.js';
import { DailySpend, Usage, type MeterUsage } from './usage.types.js';

function toMeterUsage(line: MeterUsageLine): MeterUsage {
  return {
    meter: line.meter,
    rateVersion: line.rateVersion,
    unit: 'unit',
    units: Number(line.units),
    totalUsd: formatUsd(line.amountMicros),
  };
}

const usdOrNull = (micros: bigint | null) => (micros === null ? null : formatUsd(micros));

export function toUsage(usage: UsageReport): Usage {
  return {
    month: usage.month,
    status: usage.status,
    closedAt: usage.closedAt,
    period: { start: usage.periodStart, end: usage.periodEnd },
    currency: usage.currency,
    rateVersion: usage.rateVersion,
    totalUsd: formatUsd(usage.totalMicros),
    meters: usage.meters.map(toMeterUsage),
    keys: usage.keys.map((key) => ({
      keyId: key.keyId,
      label: key.label,
      spendingLimitUsd: usdOrNull(key.spendingLimitMicros),
      spentUsd: formatUsd(key.spentMicros),
      remainingUsd: usdOrNull(key.remainingMicros),
      meters: key.meters.map(toMeterUsage),
    })),
  };
}

@Resolver(() => Usage)
export class UsageResolver {
  @Authorized()
  @Query(() => Usage, { description: 'Usage by meter and by paying key in one billing month (GET /meta/usage)' })
  async usage(
    @Ctx() context: GraphqlContext,
    @Arg('month', () => String, { nullable: true, description: 'YYYY-MM (UTC); default the current month' })
    month?: string,
  ): Promise<Usage> {
    const query = parseInput(UsageQuery, defined({ month: month ?? undefined }));
    return toUsage(await context.services.usage.getUsage(callContext(context), query));
  }

  @FieldResolver(() => [DailySpend], {
    description:
      "The team's charges per UTC day of the month, every day to the month's end (to today in the current month), " +
      'adding up to totalUsd; an extension read from the ledger only when asked for',
  })
  async days(@Ctx() context: GraphqlContext, @Root() usage: Usage): Promise<DailySpend[]> {
    const days = await context.services.usage.getDailySpend(callContext(context), { month: usage.month });
    return days.map((day) => ({ day: day.day, totalUsd: formatUsd(day.totalMicros) }));
  }
}
