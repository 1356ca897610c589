import { z } from 'zod';
import {
  BILLING_MONTH_PATTERN,
  formatUsd,
  parseInput,
  UsageQuery,
  type MeterUsageLine,
  type Services,
  type UsageReport,
} from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { ErrorShape, queryOf, timestamp } from '../shapes.js';

const usd = z
  .string()
  .regex(/^\d+(\.\d{1,6})?$/)
  .describe('USD as an exact decimal string (micro-dollar precision, no trailing zeros)');
const units = z.number().int().min(0).describe('Billable units (each meter says how many bytes one unit is)');

const KeyMeterUsageShape = z
  .strictObject({
    meter: z.string().describe('webhooks.ingest_64k or webhooks.delivery_16k'),
    rate_version: z.string().describe('The rate version that priced these units'),
    units,
    total_usd: usd,
  })
  .meta({ id: 'KeyMeterUsage' });

const MeterUsageShape = z
  .strictObject({
    meter: z.string().describe('webhooks.ingest_64k or webhooks.delivery_16k'),
    rate_version: z.string().describe('The rate version that priced these units'),
    unit: z.literal('unit'),
    units,
    total_usd: usd,
  })
  .meta({ id: 'MeterUsage', description: "One meter's units and money in the month, at one rate version" });

const KeyUsageShape = z
  .strictObject({
    key_id: z.string().describe('The paying secret key'),
    label: z.string().nullable().describe("The operator's label for the key (admin CLI); null when it has none"),
    spending_limit_usd: usd
      .nullable()
      .describe("The key's monthly spending limit (when the month closed, for a closed month); null: none"),
    spent_usd: usd.describe('What the key paid in the month'),
    remaining_usd: usd
      .nullable()
      .describe('What is left of the limit this month (never below 0); null without a limit'),
    meters: z.array(KeyMeterUsageShape),
  })
  .meta({ id: 'KeyUsage', description: "One paying key's month" });

export const UsageShape = z
  .strictObject({
    month: z.string().regex(BILLING_MONTH_PATTERN).describe('The billing month, YYYY-MM (UTC)'),
    status: z
      .enum(['open', 'closed'])
      .describe('open: the current month, still taking charges; closed: an ended month, frozen at its close'),
    closed_at: timestamp.nullable().describe('When the month was closed; null while it is open'),
    period: z
      .strictObject({
        start: timestamp.describe('00:00 UTC of the first day of the month'),
        end: timestamp.describe('00:00 UTC of the next month (exclusive): spending limits reset then'),
      })
      .meta({ id: 'BillingPeriod' }),
    currency: z.literal('USD'),
    rate_version: z
      .string()
      .describe('The published rates in force for the month: now if open, at its close if closed'),
    total_usd: usd.describe("The sum of the team's charges in the month, exactly"),
    meters: z.array(MeterUsageShape).describe('Every meter of the rates (0 when unused), then other rate versions'),
    keys: z.array(KeyUsageShape).describe('Keys not revoked, and every key charged in the month'),
  })
  .meta({ id: 'Usage', description: "The team's usage by meter and by paying key in one billing month" });

function renderMeterLine(line: MeterUsageLine) {
  return {
    meter: line.meter,
    rate_version: line.rateVersion,
    units: Number(line.units),
    total_usd: formatUsd(line.amountMicros),
  };
}

const usdOrNull = (micros: bigint | null) => (micros === null ? null : formatUsd(micros));

export function renderUsage(usage: UsageReport): z.infer<typeof UsageShape> {
  return {
    month: usage.month,
    status: usage.status,
    closed_at: usage.closedAt?.toISOString() ?? null,
    period: { start: usage.periodStart.toISOString(), end: usage.periodEnd.toISOString() },
    currency: usage.currency,
    rate_version: usage.rateVersion,
    total_usd: formatUsd(usage.totalMicros),
    meters: usage.meters.map((line) => ({
      meter: line.meter,
      rate_version: line.rateVersion,
      unit: 'unit' as const,
      units: Number(line.units),
      total_usd: formatUsd(line.amountMicros),
    })),
    keys: usage.keys.map((key) => ({
      key_id: key.keyId,
      label: key.label,
      spending_limit_usd: usdOrNull(key.spendingLimitMicros),
      spent_usd: formatUsd(key.spentMicros),
      remaining_usd: usdOrNull(key.remainingMicros),
      meters: key.meters.map(renderMeterLine),
    })),
  };
}

/** The platform API's usage route, {meta_url}/meta/usage (docs/usage.md). */
export function usageRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      operationId: 'getUsage',
      summary: 'Usage by meter and by paying key in one billing month (platform API: {meta_url}/meta/usage)',
      method: 'GET',
      path: '/platform/meta/usage',
      auth: 'secret_key',
      rateClass: 'read',
      query: queryOf(UsageQuery, {
        month: 'The billing month, YYYY-MM (UTC); default the current one. Not after the current month',
      }),
      responses: { 200: UsageShape, 422: ErrorShape, 503: ErrorShape },
      async handler({ ctx, query }) {
        const usage = await services.usage.getUsage(ctx, parseInput(UsageQuery, query));
        return { status: 200, body: renderUsage(usage) };
      },
    }),
  ];
}
