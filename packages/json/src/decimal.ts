const JSON_NUMBER = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * An exact decimal: zero, or ±0.d1d2...dn × 10^pointExponent with d1 ≠ 0 and dn ≠ 0. Keeping the exponent of the
 * leading digit (a bigint) means comparing magnitudes never builds the digits a huge exponent like 1e999999999 spells.
 */
interface ExactDecimal {
  negative: boolean;
  /** Significant digits without leading or trailing zeros; '' for zero. */
  digits: string;
  pointExponent: bigint;
}

/** Exact comparison of two JSON number spellings: 1.0e3 equals 1000, -0 equals 0, 1e400 is above 1e399. */
export function compareJsonNumbers(a: string, b: string): -1 | 0 | 1 {
  return compareDecimals(parseJsonNumber(a), parseJsonNumber(b));
}

/** True when `text` is exactly one JSON number (RFC 8259 grammar, no whitespace). */
export function isJsonNumber(text: string): boolean {
  return JSON_NUMBER.test(text);
}

function parseJsonNumber(text: string): ExactDecimal {
  const match = JSON_NUMBER.exec(text);
  if (match === null) throw new RangeError(`Not a JSON number: ${JSON.stringify(text)}`);
  const [, sign = '', integerPart = '', fractionPart = '', exponentPart = '0'] = match;
  const allDigits = integerPart + fractionPart;
  const firstSignificant = allDigits.search(/[1-9]/);
  if (firstSignificant < 0) return { negative: false, digits: '', pointExponent: 0n };
  const digits = allDigits.slice(firstSignificant, lastNonZeroIndex(allDigits) + 1);
  const leadingDigitPlace = integerPart.length - firstSignificant;
  return { negative: sign === '-', digits, pointExponent: BigInt(exponentPart) + BigInt(leadingDigitPlace) };
}

// A loop, not /0+$/: that regex backtracks quadratically over long runs of inner zeros.
function lastNonZeroIndex(digits: string): number {
  let index = digits.length - 1;
  while (digits.charCodeAt(index) === 0x30) index--;
  return index;
}

function compareDecimals(a: ExactDecimal, b: ExactDecimal): -1 | 0 | 1 {
  const signA = signOf(a);
  const signB = signOf(b);
  if (signA !== signB) return signA < signB ? -1 : 1;
  if (signA === 0) return 0;
  const magnitude = compareMagnitudes(a, b);
  return signA < 0 ? negate(magnitude) : magnitude;
}

function signOf(decimal: ExactDecimal): -1 | 0 | 1 {
  if (decimal.digits === '') return 0;
  return decimal.negative ? -1 : 1;
}

function compareMagnitudes(a: ExactDecimal, b: ExactDecimal): -1 | 0 | 1 {
  if (a.pointExponent !== b.pointExponent) return a.pointExponent < b.pointExponent ? -1 : 1;
  // Same leading place and no trailing zeros: digit strings order like the numbers (a proper prefix is smaller).
  if (a.digits === b.digits) return 0;
  return a.digits < b.digits ? -1 : 1;
}

function negate(order: -1 | 0 | 1): -1 | 0 | 1 {
  return order === 0 ? 0 : order === 1 ? -1 : 1;
}
