// The patterns of egress that a caller or a receiver reaches, on their worst cases at the longest input they can
// have: receiver URLs (2,048 bytes, checked before any pattern runs on a longer one) and a hostile receiver's
// Retry-After (a header line of up to 16 KiB). A regression guard with a generous bound, not a benchmark.
import { describe, expect, it } from 'vitest';
import { parseIPv4 } from './address.js';
import { parseRetryAfter } from './retry-after.js';
import { checkReceiverUrl, MAX_RECEIVER_URL_BYTES } from './url-policy.js';

const BOUND_MS = 200;

function fastestRun(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const repeat = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const worstCases = (units: readonly string[], length: number) =>
  units.flatMap((unit) => [repeat(unit, length - 1) + '!', repeat(unit, length)]);

describe('egress patterns at their worst', () => {
  it('Retry-After of a hostile receiver', () => {
    for (const attack of worstCases(['1', 'Mon', 'Monday, ', ' 0', ':-', 'a'], 16_000))
      expect(fastestRun(() => parseRetryAfter(attack, 0))).toBeLessThan(BOUND_MS);
  });

  it('receiver URLs and IPv4 octets', () => {
    const policy = { allowLoopback: false, serviceHosts: [] };
    const prefixes = ['https://', 'https://a@', 'https:////', 'https://1.'];
    for (const prefix of prefixes)
      for (const attack of worstCases(['/', '\\', '@', '1.', '0', 'a.'], MAX_RECEIVER_URL_BYTES - prefix.length))
        expect(fastestRun(() => checkReceiverUrl(prefix + attack, policy))).toBeLessThan(BOUND_MS);
    for (const attack of worstCases(['1', '0', '1.'], 16_000))
      expect(fastestRun(() => parseIPv4(attack))).toBeLessThan(BOUND_MS);
  });
});
