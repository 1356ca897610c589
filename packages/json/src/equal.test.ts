import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalStringify } from './canonical.js';
import { jsonNodesEqual } from './equal.js';
import { jsonText } from './json.testing.js';
import { minify, rawText } from './minify.js';
import type { JsonNode } from './node.js';
import { parseStrict } from './parse.js';

const equal = (a: string, b: string): boolean => jsonNodesEqual(parseStrict(a), parseStrict(b));

/** The same document with the members of every object in reverse order. */
function reverseMembers(source: string, node: JsonNode): string {
  if (node.kind === 'array') return `[${node.items.map((item) => reverseMembers(source, item)).join(',')}]`;
  if (node.kind !== 'object') return rawText(source, node);
  const members = node.members.map(
    (member) => `${source.slice(member.keyStart, member.keyEnd)}:${reverseMembers(source, member.value)}`,
  );
  return `{${members.reverse().join(',')}}`;
}

/** Values whose numbers are all exact in binary floating point, spelled in several ways. */
const exactJson = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('0', '-0', '0.0', '1', '1.0', '10e-1', '0.1e1', '0.5', '5E-1', '2', 'true', 'false', 'null'),
    fc.constantFrom('"a"', '"\\u0061"', '"b"', '""'),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    fc
      .uniqueArray(fc.tuple(fc.constantFrom('a', 'b', 'c'), tie('value')), { selector: ([key]) => key, maxLength: 3 })
      .map((members) => `{${members.map(([key, value]) => `"${key}":${value}`).join(',')}}`),
  ),
})).value;

describe('jsonNodesEqual', () => {
  it.each([
    ['1.0e3', '1000'],
    ['-0', '0'],
    ['"\\u0061\\/"', '"a/"'],
    ['{"a":1,"b":[true,null]}', '{ "b" : [ true , null ] , "a" : 1.00 }'],
    ['[]', '[ ]'],
    ['{}', '{ }'],
  ])('finds %s equal to %s', (a, b) => {
    expect(equal(a, b)).toBe(true);
    expect(equal(b, a)).toBe(true);
  });

  it.each([
    ['0.1', '0.10000000000000001'],
    ['1', '"1"'],
    ['true', 'false'],
    ['null', 'false'],
    ['[1,2]', '[2,1]'],
    ['[1]', '[1,1]'],
    ['{"a":1}', '{"a":1,"b":1}'],
    ['{"a":1,"b":2}', '{"a":1,"c":2}'],
    ['{"a":[]}', '{"a":{}}'],
    ['{}', '[]'],
  ])('finds %s different from %s', (a, b) => {
    expect(equal(a, b)).toBe(false);
    expect(equal(b, a)).toBe(false);
  });

  it('compares 100,000 levels of nesting without recursion', () => {
    const deep = (leaf: string): JsonNode =>
      parseStrict('['.repeat(100_000) + leaf + ']'.repeat(100_000), { maxDepth: Infinity });
    expect(jsonNodesEqual(deep('1.0'), deep('1'))).toBe(true);
    expect(jsonNodesEqual(deep('1'), deep('2'))).toBe(false);
  });
});

describe('jsonNodesEqual: properties', () => {
  it('finds any document equal to itself minified and with every object in reverse member order', () => {
    fc.assert(
      fc.property(jsonText, ({ text }) => {
        const node = parseStrict(text);
        expect(jsonNodesEqual(node, node)).toBe(true);
        expect(jsonNodesEqual(node, parseStrict(minify(text)))).toBe(true);
        expect(jsonNodesEqual(parseStrict(reverseMembers(text, node)), node)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with comparing canonical JSON when every number is exact in floating point', () => {
    fc.assert(
      fc.property(exactJson, exactJson, (a, b) => {
        const sameCanonical = canonicalStringify(JSON.parse(a)) === canonicalStringify(JSON.parse(b));
        expect(equal(a, b)).toBe(sameCanonical);
        expect(equal(a, canonicalStringify(JSON.parse(a)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
