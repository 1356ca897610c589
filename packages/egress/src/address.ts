// Classifies IP addresses as globally reachable or not. Pure: no DNS, no sockets.
// Deliveries use IPv4 only, so every IPv6 address is refused (IPv4-mapped ones included: a socket that
// reports one is unwrapped by the caller, see resolve.ts).

export type IPv4BlockReason =
  | 'unspecified'
  | 'private'
  | 'cgnat'
  | 'loopback'
  | 'link_local'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'reserved'
  | 'broadcast'
  | 'protocol_assignment'
  | 'relay';

/** Why an address is refused. `malformed` means the input was not a canonical dotted-quad (fail closed). */
export type BlockReason = IPv4BlockReason | 'ipv6' | 'malformed';

export type AddressClass = { allowed: true } | { allowed: false; reason: BlockReason };

const OCTET = /^(?:0|[1-9][0-9]{0,2})$/;

interface BlockedRange {
  readonly base: number;
  readonly prefixLength: number;
  readonly reason: IPv4BlockReason;
}

function range(cidr: string, reason: IPv4BlockReason): BlockedRange {
  const [address = '', prefix = ''] = cidr.split('/');
  const base = parseIPv4(address);
  if (base === null) throw new Error(`bad range ${cidr}`);
  return { base, prefixLength: Number(prefix), reason };
}

// Every IPv4 range that is not globally reachable (IANA special-purpose registry, RFC 6890 and successors).
// 255.255.255.255 sits inside 240/4; the more specific entry comes first so it gets the better name.
const BLOCKED_RANGES: readonly BlockedRange[] = [
  range('255.255.255.255/32', 'broadcast'),
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'cgnat'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link_local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'protocol_assignment'),
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', 'relay'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
];

/**
 * Parses a canonical dotted-quad ("93.184.216.34") into an unsigned 32-bit number; null for anything else.
 * Deliberately strict: no octal, hex, short forms or leading zeros. Callers normalise with the WHATWG URL
 * parser first; anything that is still not canonical is refused rather than guessed at.
 */
export function parseIPv4(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!OCTET.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

function inRange(value: number, blocked: BlockedRange): boolean {
  const size = 2 ** (32 - blocked.prefixLength);
  return value >= blocked.base && value < blocked.base + size;
}

/** Classifies a canonical dotted-quad IPv4 address. Non-canonical input is refused as `malformed`. */
export function classifyIPv4(address: string): AddressClass {
  const value = parseIPv4(address);
  if (value === null) return { allowed: false, reason: 'malformed' };
  const blocked = BLOCKED_RANGES.find((candidate) => inRange(value, candidate));
  return blocked ? { allowed: false, reason: blocked.reason } : { allowed: true };
}

/** Classifies any IP address string: IPv6 (anything with a colon, brackets included) is always refused. */
export function classifyIp(address: string): AddressClass {
  if (address.includes(':')) return { allowed: false, reason: 'ipv6' };
  return classifyIPv4(address);
}

/** Whether a canonical dotted-quad is in 127.0.0.0/8 (the only range the loopback setting opens). */
export function isLoopbackIPv4(address: string): boolean {
  const result = classifyIPv4(address);
  return !result.allowed && result.reason === 'loopback';
}
