import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError } from './errors.js';
import { describeExactly, jsonText } from './json.testing.js';
import { minify, rawText } from './minify.js';
import type { JsonNode } from './node.js';
import { parseStrict } from './parse.js';
import { resolvePointer } from './pointer.js';

/** Reference definition, independent of the implementation: drop JSON whitespace unless it is inside a string. */
function removeWhitespaceOutsideStringsByRegex(text: string): string {
  return text.replace(
    /("(?:[^"\\]|\\.)*")|[ \t\n\r]+/g,
    (_match, stringLiteral: string | undefined) => stringLiteral ?? '',
  );
}

function withoutStringLiterals(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"/g, '""');
}

describe('minify', () => {
  it('removes whitespace between tokens and keeps key order, escapes and number spellings', () => {
    const source = ' {\n  "b" : [ 1.0 , 1e3 , -0 ],\r\n\t"a\\u0041 \\/ x" : "  \\n " , "c":{ } }\n';
    expect(minify(source)).toBe('{"b":[1.0,1e3,-0],"a\\u0041 \\/ x":"  \\n ","c":{}}');
  });

  it('returns already minified text unchanged, and scalars without surrounding whitespace', () => {
    expect(minify('{"a":[1,"x y"]}')).toBe('{"a":[1,"x y"]}');
    expect(minify(' \t"a b"\n')).toBe('"a b"');
    expect(minify('  12.50 ')).toBe('12.50');
  });

  it('keeps whitespace inside strings next to escaped quotes and backslashes', () => {
    expect(minify('[ "\\" ", "\\\\" , " \\\\\\" " ]')).toBe('["\\" ","\\\\"," \\\\\\" "]');
  });

  it('rejects invalid JSON rather than minifying it', () => {
    expect(() => minify('{"a":1,}')).toThrow(JsonSyntaxError);
    expect(() => minify('{"a":1,"a":2}')).toThrow(JsonSyntaxError);
  });

  it('reuses a node the caller already parsed', () => {
    const source = ' [ 1 , 2 ] ';
    expect(minify(source, parseStrict(source))).toBe('[1,2]');
  });

  it('handles 100,000 levels of nesting without recursion', () => {
    const source = '[ '.repeat(100_000) + ' ]'.repeat(100_000);
    const minified = minify(source, parseStrict(source, { maxDepth: Infinity }));
    expect(minified).toBe('['.repeat(100_000) + ']'.repeat(100_000));
  });
});

describe('rawText', () => {
  it('gives the minified exact bytes of a nested node', () => {
    const source = '{ "data" : { "amount" : 1.50 , "tags" : [ "a" , "\\u0062" ] } }';
    const root = parseStrict(source);
    expect(rawText(source, resolvePointer(root, '/data')!)).toBe('{"amount":1.50,"tags":["a","\\u0062"]}');
    expect(rawText(source, resolvePointer(root, '/data/amount')!)).toBe('1.50');
    expect(rawText(source, resolvePointer(root, '/data/tags/1')!)).toBe('"\\u0062"');
  });
});

describe('minify: properties', () => {
  it('denotes the same value, drops exactly the whitespace outside strings and is idempotent', () => {
    fc.assert(
      fc.property(jsonText, ({ text }) => {
        const minified = minify(text);
        expect(describeExactly(JSON.parse(minified))).toBe(describeExactly(JSON.parse(text)));
        expect(minified).toBe(removeWhitespaceOutsideStringsByRegex(text));
        expect(withoutStringLiterals(minified)).not.toMatch(/[ \t\n\r]/);
        expect(minify(minified)).toBe(minified);
      }),
      { numRuns: 1000 },
    );
  });

  it('gives every node a raw text that is its own minified spelling', () => {
    fc.assert(
      fc.property(jsonText, ({ text }) => {
        const minified = minify(text);
        const nodesInSource = allNodes(parseStrict(text));
        const nodesInMinified = allNodes(parseStrict(minified));
        expect(nodesInSource.map((node) => rawText(text, node))).toEqual(
          nodesInMinified.map((node) => minified.slice(node.start, node.end)),
        );
      }),
      { numRuns: 1000 },
    );
  });
});

function allNodes(root: JsonNode): JsonNode[] {
  const nodes: JsonNode[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const node = pending.pop()!;
    nodes.push(node);
    if (node.kind === 'array') pending.push(...node.items);
    if (node.kind === 'object') pending.push(...node.members.map((member) => member.value));
  }
  return nodes;
}
