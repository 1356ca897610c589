import { JsonSyntaxError } from '@svc/json';
import { jsonSyntaxMessage } from '../rest/pipeline.js';
import {
  formatUsd,
  RATES,
  RawJson,
  ServiceError,
  type Capabilities as CoreCapabilities,
  type EventTypeView,
  type Limits,
  type SettingsView,
  type TenantView,
} from '@svc/core';
import type { Capabilities, EventType, Limit, Rates, Settings, Tenant } from './types.js';

export function toTenant(view: TenantView): Tenant {
  return {
    id: view.id,
    externalId: view.externalId,
    name: view.name,
    metadata: view.metadata,
    status: view.status,
    version: view.version,
    etag: view.etag,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
  };
}

export function toEventType(view: EventTypeView): EventType {
  return {
    id: view.id,
    name: view.name,
    description: view.description,
    example: view.example,
    archived: view.archived,
    version: view.version,
    etag: view.etag,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
  };
}

export function toLimits(limits: Limits): Limit[] {
  return Object.entries(limits).map(([name, limit]) => ({ name, ...limit }));
}

export function toSettings(view: SettingsView, limits: Limits): Settings {
  return {
    configurationVersion: view.configurationVersion,
    approvedConfigurationVersion: view.approvedConfigurationVersion,
    payloadRetentionDays: view.payloadRetentionDays,
    responseBodyLogging: view.responseBodyLogging,
    responseRetentionDays: view.responseRetentionDays,
    portalFrameOrigins: view.portalFrameOrigins,
    etag: view.etag,
    limits: toLimits(limits),
  };
}

export function toCapabilities(caps: CoreCapabilities): Capabilities {
  return {
    serviceId: caps.serviceId,
    region: caps.region,
    egressIpv4Cidrs: caps.egressIpv4Cidrs,
    ipv6Delivery: caps.ipv6Delivery,
    verificationKinds: [...caps.verificationKinds],
    contentTypes: [...caps.contentTypes],
    limits: toLimits(caps.limits),
    rateVersion: caps.rateVersion,
  };
}

export function toRates(): Rates {
  return {
    currency: RATES.currency,
    version: RATES.version,
    effectiveAt: RATES.effectiveAt,
    meters: RATES.meters.map((m) => ({
      id: m.id,
      unit: m.unit,
      unitBytes: m.unitBytes,
      unitPriceUsd: formatUsd(m.unitPriceMicros),
    })),
  };
}

/** JSON text from a GraphQL string argument, checked like a REST body member; null stays null. */
export function rawJsonArgument(text: string | null | undefined, field: string): RawJson | null | undefined {
  if (text === undefined || text === null) return text;
  try {
    return RawJson.parse(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError)
      throw new ServiceError(
        'invalid_field',
        error.reason === 'too_deep' ? jsonSyntaxMessage(field, error) : `${field} must be valid JSON`,
        { field },
      );
    throw error;
  }
}

/** Drops undefined members so omitted GraphQL arguments stay omitted for the service. */
export function defined<T extends Record<string, unknown>>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}
