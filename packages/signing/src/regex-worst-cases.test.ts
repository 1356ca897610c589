// The secret patterns of signing, on their worst cases: an operator may bring a standard_webhooks secret of any
// length in a 1 MiB body. A regression guard with a generous bound, not a benchmark.
import { describe, expect, it } from 'vitest';
import { decodeSecret } from './standard-webhooks.js';
import { decodeSvcSecret } from './svc-signature.js';

function fastestRun(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    try {
      run();
    } catch {
      // A refused secret is the expected answer; only its speed matters here.
    }
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe('secret patterns at their worst', () => {
  const length = 1_048_576;
  const attacks = ['A', 'AAA=', 'AA=', '+/', '-_'].flatMap((unit) => {
    const run = unit.repeat(Math.ceil(length / unit.length)).slice(0, length - 1);
    return [`whsec_${run}!`, `whsec_${run}`];
  });

  it.each(attacks.map((attack) => [attack.slice(6, 14), attack] as const))('%j...', (_head, attack) => {
    expect(fastestRun(() => decodeSecret(attack))).toBeLessThan(1_000);
    expect(fastestRun(() => decodeSvcSecret(attack))).toBeLessThan(1_000);
  });
});
