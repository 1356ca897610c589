import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalStringify } from './canonical.js';
import { unicodeScalar } from './json.testing.js';
import { parseStrict } from './parse.js';
import { toValue } from './value.js';

/** A deep copy with the keys of every object inserted in reverse order. */
function reverseKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeyOrder);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) {
    const member = reverseKeyOrder((value as Record<string, unknown>)[key]);
    Object.defineProperty(copy, key, { value: member, writable: true, enumerable: true, configurable: true });
  }
  return copy;
}

describe('canonicalStringify', () => {
  it('sorts object keys at every level and keeps array order', () => {
    expect(canonicalStringify({ b: 1, a: { d: [3, { z: 0, y: 1 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":1,"z":0}]},"b":1}',
    );
  });

  it('sorts by UTF-16 code units, so "10" comes before "9" and an emoji before U+FFFF', () => {
    expect(canonicalStringify({ 9: 'nine', 10: 'ten', a: 0, B: 0 })).toBe('{"10":"ten","9":"nine","B":0,"a":0}');
    expect(canonicalStringify({ '\uffff': 1, '😀': 2 })).toBe('{"😀":2,"\uffff":1}');
  });

  it('follows JSON.stringify for undefined, functions, symbols, non-finite numbers, -0 and toJSON', () => {
    const value = {
      u: undefined,
      f: () => 1,
      s: Symbol('s'),
      list: [undefined, () => 1, Symbol('t'), Number.NaN, Infinity, -0],
      date: new Date('2024-01-02T03:04:05.000Z'),
      boxed: [Object(1), Object('s'), Object(false)],
      custom: { toJSON: (key: string) => `key=${key}` },
    };
    expect(canonicalStringify(value)).toBe(
      '{"boxed":[1,"s",false],"custom":"key=custom","date":"2024-01-02T03:04:05.000Z",' +
        '"list":[null,null,null,null,null,0]}',
    );
  });

  it('keeps an own "__proto__" key like any other key', () => {
    const value = toValue(parseStrict('{"z":1,"__proto__":{"b":1,"a":2}}'));
    expect(canonicalStringify(value)).toBe('{"__proto__":{"a":2,"b":1},"z":1}');
  });

  it('escapes strings as JSON.stringify does, lone surrogates included', () => {
    expect(canonicalStringify(['"\\\n\u0001', '\ud800'])).toBe('["\\"\\\\\\n\\u0001","\\ud800"]');
  });

  it('refuses cycles, bigints and values that have no JSON form', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    expect(() => canonicalStringify(cyclic)).toThrow(TypeError);
    expect(() => canonicalStringify({ n: 1n })).toThrow(TypeError);
    expect(() => canonicalStringify(undefined)).toThrow(TypeError);
    expect(() => canonicalStringify(() => 1)).toThrow(TypeError);
  });

  it('allows the same object twice when it is not its own ancestor', () => {
    const shared = { x: 1 };
    expect(canonicalStringify({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}');
  });
});

describe('canonicalStringify: properties', () => {
  const jsonValue = fc.jsonValue({ stringUnit: fc.oneof(fc.string({ minLength: 1, maxLength: 1 }), unicodeScalar) });

  it('denotes the value it was given', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        // toEqual, not describeExactly: key order is the one thing canonicalStringify is meant to change.
        expect(JSON.parse(canonicalStringify(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 1000 },
    );
  });

  it('gives the same text whatever order the keys were inserted in, and is stable on its own output', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const canonical = canonicalStringify(value);
        expect(canonicalStringify(reverseKeyOrder(value))).toBe(canonical);
        expect(canonicalStringify(JSON.parse(canonical))).toBe(canonical);
      }),
      { numRuns: 1000 },
    );
  });
});
