import type { Limits } from './limits.js';

export const SERVICE_VERSION = '2026-10-09';
export const RATE_VERSION = '2026-10-08';

export const VERIFICATION_KINDS = [
  'standard_webhooks',
  'hmac',
  'bearer',
  'payments',
  'codehost',
  'commerce',
  'chat',
  'telephony',
] as const;

export const CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/octet-stream',
  'application/x-www-form-urlencoded',
] as const;

export interface Meter {
  id: 'webhooks.ingest_64k' | 'webhooks.delivery_16k';
  unit: 'unit';
  unitBytes: number;
  /** Micro-USD per unit; rendered as a decimal string. */
  unitPriceMicros: bigint;
}

export const METERS: readonly Meter[] = [
  { id: 'webhooks.ingest_64k', unit: 'unit', unitBytes: 65_536, unitPriceMicros: 10n },
  { id: 'webhooks.delivery_16k', unit: 'unit', unitBytes: 16_384, unitPriceMicros: 50n },
];

export interface Rates {
  currency: 'USD';
  version: string;
  effectiveAt: Date;
  meters: readonly Meter[];
}

export const RATES: Rates = {
  currency: 'USD',
  version: RATE_VERSION,
  effectiveAt: new Date('2026-10-08T00:00:00.000Z'),
  meters: METERS,
};

export interface Capabilities {
  serviceId: string;
  region: string;
  egressIpv4Cidrs: string[];
  ipv6Delivery: false;
  verificationKinds: readonly string[];
  contentTypes: readonly string[];
  limits: Limits;
  rateVersion: string;
}

export function capabilities(serviceId: string, region: string, limits: Limits): Capabilities {
  return {
    serviceId,
    region,
    egressIpv4Cidrs: [],
    ipv6Delivery: false,
    verificationKinds: VERIFICATION_KINDS,
    contentTypes: CONTENT_TYPES,
    limits,
    rateVersion: RATE_VERSION,
  };
}

/** Micro-USD as a decimal USD string without trailing zeros ("0.00001", "0", "12.5"). */
export function formatUsd(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / 1_000_000n;
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A decimal USD string (at most 6 decimals) as micro-USD; null when malformed. */
/** A decimal amount of USD as the API takes it: up to 12 digits, up to 6 decimals. */
export const USD_AMOUNT_PATTERN = /^(\d{1,12})(?:\.(\d{1,6}))?$/;

export function parseUsd(text: string): bigint | null {
  const match = USD_AMOUNT_PATTERN.exec(text);
  if (!match) return null;
  return BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'));
}
