import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';

export const ID_PREFIXES = {
  team: 'team_',
  key: 'key_',
  tenant: 'wdt_',
  eventType: 'wdy_',
  endpoint: 'wde_',
  source: 'wds_',
  message: 'wdm_',
  delivery: 'wdd_',
  attempt: 'wda_',
  replay: 'wdr_',
  operationalEvent: 'wdv_',
  subscription: 'whe_',
  subscriptionDelivery: 'whd_',
  subscriptionAttempt: 'wha_',
  platformEvent: 'evt_',
  environment: 'ffe_',
  charge: 'chg_',
  portalSession: 'wdp_',
  streamToken: 'wdk_',
  streamConnection: 'wdc_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** What a not_found error calls a resource of each kind ("tenant not found"). */
export const ID_NOUNS: Record<IdKind, string> = {
  team: 'team',
  key: 'key',
  tenant: 'tenant',
  eventType: 'event type',
  endpoint: 'endpoint',
  source: 'source',
  message: 'message',
  delivery: 'delivery',
  attempt: 'attempt',
  replay: 'replay',
  operationalEvent: 'event',
  subscription: 'event subscription',
  subscriptionDelivery: 'delivery',
  subscriptionAttempt: 'attempt',
  platformEvent: 'event',
  environment: 'environment',
  charge: 'charge',
  portalSession: 'portal session',
  streamToken: 'stream token',
  streamConnection: 'stream connection',
};

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeBase32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31];
  return out;
}

let lastMs = -1;
let lastRandom = 0n;
const RANDOM_BITS = 80n;
const RANDOM_MAX = (1n << RANDOM_BITS) - 1n;

/**
 * Prefixed IDs that sort by creation time (48-bit milliseconds, then 80 random bits, in lowercase Crockford
 * base32), so lists can page by ID alone. Within one millisecond (or a clock that stands still) the random
 * part counts up, so IDs made by one process stay in creation order.
 */
export function newId(kind: IdKind, clock: Clock): string {
  let ms = Math.max(0, clock.now().getTime());
  if (ms <= lastMs && lastRandom < RANDOM_MAX) {
    ms = lastMs;
    lastRandom += 1n;
  } else {
    lastRandom = BigInt('0x' + randomBytes(10).toString('hex')) >> 1n;
  }
  lastMs = ms;
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes.write(lastRandom.toString(16).padStart(20, '0'), 6, 'hex');
  return ID_PREFIXES[kind] + encodeBase32(bytes);
}

/** Any ID: a prefix of lowercase letters and `_`, then 26 lowercase base32 characters. */
export const ID_SHAPE = /^[a-z]+_[0-9a-z]{26}$/;

/**
 * Whether `id` has the shape of an ID the service makes (a prefix and 26 base32 characters), of `kind` when given.
 * Checked before any query, so a malformed ID (a NUL, a 5,000-character path segment) is answered like an unknown
 * one and never reaches Postgres.
 */
export function isWellFormedId(id: string, kind?: IdKind): boolean {
  return ID_SHAPE.test(id) && (kind === undefined || id.startsWith(ID_PREFIXES[kind]));
}
