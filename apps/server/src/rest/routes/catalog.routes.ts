import { z } from 'zod';
import { formatUsd, RATES, UpdateSettingsInput, type Limits, type Services, type SettingsView } from '@svc/core';
import { defineRoute, type RouteSpec } from '../route.js';
import { decimalString, ErrorShape, timestamp } from '../shapes.js';

const LimitShape = z
  .strictObject({
    value: z.number().int(),
    unit: z.string().describe('What the value counts, e.g. count, bytes, per_second'),
    measured: z.literal(false).optional().describe('false when the limit is declared but not yet enforced'),
  })
  .meta({ id: 'Limit' });
const LimitsShape = z.record(z.string(), LimitShape).meta({ id: 'Limits', description: 'Limits by name' });

export const CapabilitiesShape = z
  .strictObject({
    service_id: z.string(),
    region: z.string(),
    egress_ipv4_cidrs: z.array(z.string()).describe('Deliveries come from these IPv4 ranges'),
    ipv6_delivery: z.boolean().describe('Whether deliveries may go to IPv6 receivers'),
    verification_kinds: z.array(z.string()).describe('Inbound signature verifiers sources can use'),
    content_types: z.array(z.string()).describe('Content types a source accepts'),
    limits: LimitsShape,
    rate_version: z.string().describe('The version of the published rates in force'),
  })
  .meta({ id: 'Capabilities', description: 'What this service supports and its limits' });

export const RatesShape = z
  .strictObject({
    currency: z.string(),
    version: z.string(),
    effective_at: timestamp,
    meters: z.array(
      z
        .strictObject({
          id: z.string(),
          unit: z.literal('unit'),
          unit_bytes: z.number().int().describe('Bytes per billable unit'),
          unit_price_usd: z.string().describe('Price per unit in USD, a decimal string'),
        })
        .meta({ id: 'Meter' }),
    ),
  })
  .meta({ id: 'Rates', description: 'The published rates' });

export const SettingsShape = z
  .strictObject({
    configuration_version: decimalString.describe('Moves by one with every change of the settings'),
    payload_retention_days: z.number().int().describe('Days message bodies are kept (1 to 30)'),
    response_body_logging: z.boolean().describe("Whether receivers' response bodies are kept"),
    response_retention_days: z.number().int().describe('Days response bodies are kept (1 to 7)'),
    approved_configuration_version: decimalString,
    portal_frame_origins: z
      .array(z.string())
      .describe("An extension: the origins allowed to frame the receivers' portal (docs/portal.md); empty: none"),
    limits: LimitsShape,
  })
  .meta({ id: 'Settings', description: "The team's retention settings and limits" });

export function renderLimits(limits: Limits) {
  return Object.fromEntries(
    Object.entries(limits).map(([name, limit]) => [
      name,
      limit.measured
        ? { value: limit.value, unit: limit.unit }
        : { value: limit.value, unit: limit.unit, measured: false },
    ]),
  );
}

export function renderSettings(settings: SettingsView, limits: Limits) {
  return {
    configuration_version: settings.configurationVersion,
    payload_retention_days: settings.payloadRetentionDays,
    response_body_logging: settings.responseBodyLogging,
    response_retention_days: settings.responseRetentionDays,
    approved_configuration_version: settings.approvedConfigurationVersion,
    portal_frame_origins: settings.portalFrameOrigins,
    limits: renderLimits(limits),
  };
}

export function renderRates() {
  return {
    currency: RATES.currency,
    version: RATES.version,
    effective_at: RATES.effectiveAt.toISOString(),
    meters: RATES.meters.map((m) => ({
      id: m.id,
      unit: m.unit,
      unit_bytes: m.unitBytes,
      unit_price_usd: formatUsd(m.unitPriceMicros),
    })),
  };
}

export function catalogRoutes(services: Services): RouteSpec[] {
  const caps = services.capabilities;
  return [
    defineRoute({
      operationId: 'getCapabilities',
      summary: 'What this service supports and its limits',
      method: 'GET',
      path: '/capabilities',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: CapabilitiesShape },
      async handler() {
        return {
          status: 200,
          body: {
            service_id: caps.serviceId,
            region: caps.region,
            egress_ipv4_cidrs: caps.egressIpv4Cidrs,
            ipv6_delivery: caps.ipv6Delivery,
            verification_kinds: caps.verificationKinds,
            content_types: caps.contentTypes,
            limits: renderLimits(caps.limits),
            rate_version: caps.rateVersion,
          },
        };
      },
    }),
    defineRoute({
      operationId: 'getRates',
      summary: 'The published rates',
      method: 'GET',
      path: '/rates',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: RatesShape },
      async handler() {
        return { status: 200, body: renderRates() };
      },
    }),
    defineRoute({
      operationId: 'getSettings',
      summary: "The team's settings",
      method: 'GET',
      path: '/settings',
      auth: 'secret_key',
      rateClass: 'read',
      responses: { 200: SettingsShape },
      async handler({ ctx }) {
        const settings = await services.settings.getSettings(ctx);
        return {
          status: 200,
          body: renderSettings(settings, services.limits),
          headers: { ETag: settings.etag },
        };
      },
    }),
    defineRoute({
      operationId: 'updateSettings',
      summary: 'Change retention and response body logging',
      method: 'PATCH',
      path: '/settings',
      auth: 'secret_key',
      rateClass: 'config_write',
      ifMatch: true,
      input: UpdateSettingsInput,
      responses: { 200: SettingsShape, 412: ErrorShape, 422: ErrorShape, 428: ErrorShape },
      async handler({ ctx, ifMatch, input }) {
        const settings = await services.settings.updateSettings(ctx, ifMatch, input);
        return {
          status: 200,
          body: renderSettings(settings, services.limits),
          headers: { ETag: settings.etag },
        };
      },
    }),
  ];
}
