// Connect-time checks for the undici connector: resolve the host, refuse it unless every address is public,
// connect to one of the returned addresses (keeping the host name for SNI and certificates), then check
// `socket.remoteAddress` again. Checking every address defeats DNS rebinding: a name that answers with one
// public and one private address is refused as a whole, because the next connection could use either.
import { lookup as dnsLookup } from 'node:dns/promises';
import { domainToASCII } from 'node:url';
import { parseIPv4 } from './address.js';
import { checkDestinationAddress, checkHostName, describeBlockReason, type UrlPolicy } from './host-policy.js';

/** Resolves a host name to IPv4 addresses. Rejects on resolver failure (ENOTFOUND, timeouts). */
export type LookupFn = (host: string) => Promise<string[]>;

export type ConnectedAddressCheck = { ok: true; address: string } | { ok: false; reason: string };

export const systemLookup: LookupFn = async (host) => {
  const answers = await dnsLookup(host, { all: true, family: 4 });
  return answers.map((answer) => answer.address);
};

/**
 * Why a destination is refused: `address` when it is (or resolves to) a non-global address, which the spec
 * treats as "destination resolves to a private address" (the endpoint is disabled); `host` when the name
 * itself is refused (service-owned, `.local`, single label, not a valid host name).
 */
export type DestinationBlock = 'address' | 'host';

export type DestinationResult =
  | { ok: true; addresses: string[]; hostIsIp: boolean }
  /** `address`: the address the safety rules refused, when the refusal came from one. */
  | { ok: false; reason: string; blocked: DestinationBlock; address?: string };

/**
 * Returns the addresses the connector may dial for `host` (a URL hostname or the `host` returned by
 * checkReceiverUrl), with the kind of refusal. A lookup failure rejects instead: that is a network failure,
 * which the caller may retry.
 */
export async function resolveDestination(
  host: string,
  policy: UrlPolicy,
  lookup: LookupFn = systemLookup,
): Promise<DestinationResult> {
  const isIpv6 = host.startsWith('[') || host.includes(':');
  // The same normalisation as the URL parser (case, IDNA, IPv4 spellings); '' when the host is invalid.
  const normalised = isIpv6 ? host : domainToASCII(host);
  if (normalised === '') return { ok: false, reason: 'host is not a valid host name', blocked: 'host' };

  const checked = checkHostName(normalised, policy);
  if (!checked.ok) {
    const literalBlocked =
      isIpv6 || (parseIPv4(normalised) !== null && !checkDestinationAddress(normalised, policy).ok);
    return literalBlocked
      ? { ok: false, reason: checked.message, blocked: 'address', address: normalised.replace(/^\[|\]$/g, '') }
      : { ok: false, reason: checked.message, blocked: 'host' };
  }
  if (checked.hostIsIp) return { ok: true, addresses: [checked.host], hostIsIp: true };
  // RFC 6761: localhost is loopback by definition; checkHostName only lets it through when loopback is allowed.
  if (checked.host === 'localhost') return { ok: true, addresses: ['127.0.0.1'], hostIsIp: false };

  // The trailing dot makes the name absolute, so resolver search domains (Kubernetes' ndots:5) never apply.
  const addresses = [...new Set(await lookup(`${checked.host}.`))];
  if (addresses.length === 0) return { ok: false, reason: 'host has no IPv4 address', blocked: 'host' };
  for (const address of addresses) {
    const verdict = checkDestinationAddress(address, policy);
    if (!verdict.ok) {
      return {
        ok: false,
        reason: `host resolves to ${describeBlockReason(verdict.reason)}`,
        blocked: 'address',
        address,
      };
    }
  }
  return { ok: true, addresses, hostIsIp: false };
}

// Node reports IPv4 peers of dual-stack sockets as IPv4-mapped IPv6 in dotted form.
const IPV4_MAPPED_PREFIX = '::ffff:';

/** Re-checks `socket.remoteAddress` after connecting; undefined (socket already closed) is refused. */
export function checkConnectedAddress(remoteAddress: string | undefined, policy: UrlPolicy): ConnectedAddressCheck {
  if (remoteAddress === undefined || remoteAddress === '') {
    return { ok: false, reason: 'socket has no remote address' };
  }
  const address = remoteAddress.toLowerCase().startsWith(IPV4_MAPPED_PREFIX)
    ? remoteAddress.slice(IPV4_MAPPED_PREFIX.length)
    : remoteAddress;
  const verdict = checkDestinationAddress(address, policy);
  if (!verdict.ok) return { ok: false, reason: `connected to ${describeBlockReason(verdict.reason)}` };
  return { ok: true, address };
}
