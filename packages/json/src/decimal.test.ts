import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareJsonNumbers, isJsonNumber } from './decimal.js';
import { jsonNumberSpelling } from './json.testing.js';

/** Reference: a spelling as the exact rational mantissa × 10^exponent, compared by scaling with BigInt. */
function referenceCompare(a: string, b: string): -1 | 0 | 1 {
  const x = toScaledInteger(a);
  const y = toScaledInteger(b);
  const exponent = Math.min(x.exponent, y.exponent);
  const left = x.mantissa * 10n ** BigInt(x.exponent - exponent);
  const right = y.mantissa * 10n ** BigInt(y.exponent - exponent);
  return left < right ? -1 : left > right ? 1 : 0;
}

function toScaledInteger(spelling: string): { mantissa: bigint; exponent: number } {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(spelling)!;
  const [, sign = '', integer = '', fraction = '', exponent = '0'] = match;
  return { mantissa: BigInt(sign + integer + fraction), exponent: Number(exponent) - fraction.length };
}

/** Choices that turn one exact decimal (digits × 10^exponent) into one of its many JSON spellings. */
const spellingChoices = fc.record({
  trailingZeros: fc.nat({ max: 3 }),
  leadingZeros: fc.nat({ max: 3 }),
  pointSeed: fc.nat(),
  omitZeroExponent: fc.boolean(),
  exponentMark: fc.constantFrom('e', 'E'),
  plusSign: fc.boolean(),
  exponentLeadingZeros: fc.nat({ max: 2 }),
});

function spellDecimal(
  negative: boolean,
  digits: string,
  exponent: number,
  choice: typeof spellingChoices extends fc.Arbitrary<infer T> ? T : never,
): string {
  const padded = '0'.repeat(choice.leadingZeros) + digits + '0'.repeat(choice.trailingZeros);
  const point = choice.pointSeed % (padded.length + 1);
  const integer = padded.slice(0, point).replace(/^0+/, '') || '0';
  const fraction = padded.slice(point);
  const writtenExponent = exponent - choice.trailingZeros + fraction.length;
  let spelling = (negative ? '-' : '') + integer + (fraction === '' ? '' : '.' + fraction);
  if (writtenExponent !== 0 || !choice.omitZeroExponent) {
    const sign = writtenExponent < 0 ? '-' : choice.plusSign ? '+' : '';
    const magnitude = '0'.repeat(choice.exponentLeadingZeros) + String(Math.abs(writtenExponent));
    spelling += choice.exponentMark + sign + magnitude;
  }
  return spelling;
}

const exactDecimal = fc.record({
  negative: fc.boolean(),
  digits: fc.stringMatching(/^[0-9]{1,25}$/),
  exponent: fc.integer({ min: -40, max: 40 }),
});

describe('compareJsonNumbers', () => {
  it.each([
    ['1.0e3', '1000', 0],
    ['1000', '1E+3', 0],
    ['1.50', '15e-1', 0],
    ['0.15E1', '1.5', 0],
    ['-0', '0', 0],
    ['-0.0e-7', '0e99', 0],
    ['0.1', '0.10000000000000001', -1],
    ['0.10000000000000001', '0.1', 1],
    ['1e400', '1e399', 1],
    ['-1e400', '-1e399', -1],
    ['1e-400', '0', 1],
    ['-1e-400', '0', -1],
    ['9007199254740993', '9007199254740992', 1],
    ['2', '10', -1],
    ['-2', '-10', 1],
    ['-1', '1', -1],
    ['12.5', '12.49999999999999999999', 1],
    ['1e999999999', '1e999999998', 1],
    ['1e999999999', '10e999999998', 0],
    ['1e-999999999', '1e-999999998', -1],
    ['1e99999999999999999999999', '9e99999999999999999999998', 1],
  ] as const)('compares %s with %s as %i', (a, b, expected) => {
    expect(compareJsonNumbers(a, b)).toBe(expected);
    expect(compareJsonNumbers(b, a)).toBe(-expected || 0);
  });

  it('compares numbers with a million digits quickly, without quadratic work', () => {
    const long = '1' + '0'.repeat(1_000_000) + '1';
    // Quadratic work on a million digits would take minutes and hit the test timeout; speed itself is benchmarked.
    expect(compareJsonNumbers(long, `${long}0e-1`)).toBe(0);
    expect(compareJsonNumbers(long, `${long}e-1`)).toBe(1);
  });

  it.each(['', ' 1', '1 ', '01', '+1', '1.', '.5', '1e', '-', 'NaN', 'Infinity', '0x1', '1_000'])(
    'refuses %j, which is no JSON number',
    (spelling) => {
      expect(isJsonNumber(spelling)).toBe(false);
      expect(() => compareJsonNumbers(spelling, '1')).toThrow(RangeError);
      expect(() => compareJsonNumbers('1', spelling)).toThrow(RangeError);
    },
  );
});

describe('compareJsonNumbers: properties', () => {
  it('agrees with an exact BigInt comparison on random spellings', () => {
    fc.assert(
      fc.property(jsonNumberSpelling, jsonNumberSpelling, (a, b) => {
        expect(compareJsonNumbers(a, b)).toBe(referenceCompare(a, b));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with the BigInt comparison on near neighbours (one unit apart in the last digit)', () => {
    fc.assert(
      fc.property(
        exactDecimal,
        fc.integer({ min: -1, max: 1 }),
        spellingChoices,
        spellingChoices,
        (d, step, c1, c2) => {
          const neighbour = (BigInt(d.digits) + BigInt(step)).toString().replace('-', '');
          const a = spellDecimal(d.negative, d.digits, d.exponent, c1);
          const b = spellDecimal(d.negative, neighbour, d.exponent, c2);
          expect(compareJsonNumbers(a, b)).toBe(referenceCompare(a, b));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('finds every spelling of one number equal (1.50, 15e-1, 0.15E1, ...)', () => {
    fc.assert(
      fc.property(exactDecimal, spellingChoices, spellingChoices, (d, c1, c2) => {
        const a = spellDecimal(d.negative, d.digits, d.exponent, c1);
        const b = spellDecimal(d.negative, d.digits, d.exponent, c2);
        expect(isJsonNumber(a) && isJsonNumber(b)).toBe(true);
        expect(JSON.parse(a)).toBe(JSON.parse(b));
        expect(compareJsonNumbers(a, b)).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('is a total order: antisymmetric and consistent with exactly representable doubles', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer(), (x, y) => {
        const a = String(x);
        const b = String(y);
        expect(compareJsonNumbers(a, b)).toBe(Math.sign(x - y) || 0);
        expect(compareJsonNumbers(b, a)).toBe(Math.sign(y - x) || 0);
      }),
      { numRuns: 1000 },
    );
  });
});
