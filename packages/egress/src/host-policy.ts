// Host rules shared by the URL check (at registration) and the resolver (at connect time), so both
// refuse exactly the same destinations.
import { domainToASCII } from 'node:url';
import { classifyIp, isLoopbackIPv4, parseIPv4, type BlockReason } from './address.js';

export interface UrlPolicy {
  /** Local development and tests only: opens 127.0.0.0/8 and `localhost`, on any port, over http or https. */
  readonly allowLoopback: boolean;
  /** Hosts the service itself answers on; they and their subdomains are refused. */
  readonly serviceHosts: readonly string[];
}

export type HostCheck =
  | { ok: true; host: string; hostIsIp: boolean; loopback: boolean }
  | { ok: false; code: 'invalid_field' | 'unsafe_url'; message: string };

export type AddressCheck = { ok: true; address: string } | { ok: false; reason: BlockReason };

const REASON_TEXT: Record<BlockReason, string> = {
  unspecified: 'an unspecified ("this network") address',
  private: 'a private address',
  cgnat: 'a carrier-grade NAT address',
  loopback: 'a loopback address',
  link_local: 'a link-local address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  broadcast: 'the broadcast address',
  protocol_assignment: 'an IETF protocol assignment address',
  relay: 'a 6to4 relay address',
  ipv6: 'an IPv6 address (deliveries use IPv4 only)',
  malformed: 'not a valid IPv4 address',
};

export function describeBlockReason(reason: BlockReason): string {
  return REASON_TEXT[reason];
}

/** Classifies an address, opening 127.0.0.0/8 when the policy allows loopback. */
export function checkDestinationAddress(address: string, policy: UrlPolicy): AddressCheck {
  const result = classifyIp(address);
  if (result.allowed || (policy.allowLoopback && result.reason === 'loopback')) return { ok: true, address };
  return { ok: false, reason: result.reason };
}

// Names that never lead to a public receiver: RFC 6761 localhost, mDNS, private-use and reverse-DNS zones.
const BLOCKED_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'arpa'] as const;

function isSameOrSubdomain(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}

// Configured hosts get the same normalisation as URL hosts (case, IDNA, IPv4 spellings, trailing dot).
function normaliseServiceHosts(hosts: readonly string[]): string[] {
  return hosts
    .map((host) => domainToASCII(host.trim()))
    .map((host) => (host.endsWith('.') ? host.slice(0, -1) : host))
    .filter((host) => host !== '');
}

/**
 * Checks a host as the WHATWG URL parser normalised it (`url.hostname`: lower case, punycode, IPv4 in
 * canonical dotted-quad, IPv6 in brackets). Returns the host to connect to, without a trailing dot.
 */
export function checkHostName(hostname: string, policy: UrlPolicy): HostCheck {
  if (hostname.startsWith('[') || hostname.includes(':')) {
    return { ok: false, code: 'unsafe_url', message: 'url host must not be an IPv6 address; deliveries use IPv4 only' };
  }

  if (parseIPv4(hostname) !== null) {
    const verdict = checkDestinationAddress(hostname, policy);
    if (!verdict.ok) {
      return { ok: false, code: 'unsafe_url', message: `url host is ${describeBlockReason(verdict.reason)}` };
    }
    if (normaliseServiceHosts(policy.serviceHosts).includes(hostname)) {
      return { ok: false, code: 'unsafe_url', message: 'url host belongs to this service' };
    }
    return { ok: true, host: hostname, hostIsIp: true, loopback: isLoopbackIPv4(hostname) };
  }

  // "example.com." is the same absolute name as "example.com"; one trailing dot is dropped, nothing more.
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name === '' || name.split('.').some((label) => label === '')) {
    return { ok: false, code: 'invalid_field', message: 'url host has an empty label' };
  }

  if (name === 'localhost' && policy.allowLoopback) return { ok: true, host: name, hostIsIp: false, loopback: true };

  if (BLOCKED_SUFFIXES.some((suffix) => isSameOrSubdomain(name, suffix))) {
    return { ok: false, code: 'unsafe_url', message: 'url host is a local, internal or reserved name' };
  }
  // A single label resolves through search domains to whatever the local network calls it.
  if (!name.includes('.')) {
    return { ok: false, code: 'unsafe_url', message: 'url host must be a fully qualified public name' };
  }
  if (normaliseServiceHosts(policy.serviceHosts).some((serviceHost) => isSameOrSubdomain(name, serviceHost))) {
    return { ok: false, code: 'unsafe_url', message: 'url host belongs to this service' };
  }
  return { ok: true, host: name, hostIsIp: false, loopback: false };
}
