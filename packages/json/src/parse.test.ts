import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError } from './errors.js';
import { describeExactly, duplicateKeyText, jsonishText, jsonText, withOneEdit } from './json.testing.js';
import type { JsonNode } from './node.js';
import { parseStrict } from './parse.js';
import { toValue } from './value.js';

function parseError(source: string, options?: { maxDepth?: number }): JsonSyntaxError {
  try {
    parseStrict(source, options);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(source)} to be rejected`);
}

function expectRejected(source: string, reason: JsonSyntaxError['reason'], offset: number): void {
  const error = parseError(source);
  expect({ reason: error.reason, offset: error.offset }).toEqual({ reason, offset });
}

describe('parseStrict: accepted documents', () => {
  it.each([
    ['0', 0],
    ['-0', -0],
    ['1.5e3', 1500],
    ['-12.25E-2', -0.1225],
    ['1E+2', 100],
    ['"x"', 'x'],
    ['true', true],
    ['false', false],
    ['null', null],
    ['[]', []],
    ['{}', {}],
    ['[1,[2,[3]]]', [1, [2, [3]]]],
    ['{"a":{"b":[true,null]}}', { a: { b: [true, null] } }],
  ])('parses %s', (source, expected) => {
    expect(describeExactly(toValue(parseStrict(source)))).toBe(describeExactly(expected));
  });

  it('allows exactly space, tab, LF and CR around every token', () => {
    const source = ' \t\r\n{ \t\r\n"a" \t\r\n: \t\r\n[ \t\r\n1 \t\r\n, \t\r\n2 \t\r\n] \t\r\n} \t\r\n';
    expect(toValue(parseStrict(source))).toStrictEqual({ a: [1, 2] });
  });

  it('records UTF-16 spans of every node and key', () => {
    const source = ' {"k\\u00e9y" : [ 1.0 , "é" , null ] } ';
    const root = parseStrict(source);
    expect(root).toMatchObject({ kind: 'object', start: 1, end: 37 });
    if (root.kind !== 'object') throw new Error('expected an object');
    const [member] = root.members;
    expect(member).toMatchObject({ key: 'kéy', keyStart: 2, keyEnd: 12 });
    const items = (member!.value as Extract<JsonNode, { kind: 'array' }>).items;
    expect(items.map((item) => source.slice(item.start, item.end))).toEqual(['1.0', '"é"', 'null']);
    expect(items[0]).toEqual({ kind: 'number', start: 17, end: 20, raw: '1.0' });
  });

  it('decodes every escape, keeping lone surrogate escapes as they are (RFC 8259 allows them)', () => {
    const node = parseStrict('"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\uD83D\\uDE00\\ud800x\\uDC00"');
    expect(node).toMatchObject({ kind: 'string', value: '"\\/\b\f\n\r\tAé😀\ud800x\udc00' });
  });

  it('accepts raw characters from U+0020 up, including DEL, U+2028 and lone surrogates in the source', () => {
    const value = ' \u007f\u2028\ud800\udfff\u{1f600}';
    expect(toValue(parseStrict(`"${value}"`))).toBe(value);
  });

  it('accepts keys that differ only after decoding', () => {
    expect(toValue(parseStrict('{"a":1,"\\u0062":2,"A":3}'))).toStrictEqual({ a: 1, b: 2, A: 3 });
  });
});

describe('parseStrict: rejected documents', () => {
  it.each([
    ['', 0],
    [' ', 1],
    ['\ufeff1', 0],
    ['1 2', 2],
    ['01', 1],
    ['-01', 2],
    ['00', 1],
    ['-', 1],
    ['1.', 2],
    ['.5', 0],
    ['1e', 2],
    ['1e+', 3],
    ['1E-', 3],
    ['+1', 0],
    ['0x10', 1],
    ['NaN', 0],
    ['Infinity', 0],
    ['-Infinity', 1],
    ['tru', 3],
    ['True', 0],
    ['nulls', 4],
    ['[1,]', 3],
    ['[,1]', 1],
    ['[1 2]', 3],
    ['{"a":1,}', 7],
    ['{"a" 1}', 5],
    ['{a:1}', 1],
    ["{'a':1}", 1],
    ['{"a":1 "b":2}', 7],
    ['[1', 2],
    ['{"a":1', 6],
    ['"abc', 4],
    ['"\\x"', 2],
    ['"\\u12"', 5],
    ['"\\u12G4"', 5],
    ['"\\U0041"', 2],
    ['"\\', 2],
    ['"a\u0000"', 2],
    ['"a\nb"', 2],
    ['"\u001f"', 1],
    ['"\t"', 1],
    ['[1]/* c */', 3],
    ['// c\n1', 0],
    ['\u000b1', 0],
    ['\u000c1', 0],
    ['\u00a01', 0],
    ['\u20281', 0],
    ['1\u00a0', 1],
  ])('rejects %j as a syntax error at offset %i', (source, offset) => {
    expectRejected(source, 'syntax', offset);
  });

  it('throws a JsonSyntaxError that names the reason and the offset', () => {
    const error = parseError('[1,]');
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'JsonSyntaxError', reason: 'syntax', offset: 3 });
    expect(error.message).toBe('Unexpected character "]" at offset 3');
    expect(parseError('[1').message).toBe('Unexpected end of JSON input at offset 2');
  });

  it('rejects a duplicate key at the second occurrence, also when spelled with escapes', () => {
    expectRejected('{"a":1,"a":2}', 'duplicate_key', 7);
    expectRejected('{"a":1,"\\u0061":2}', 'duplicate_key', 7);
    expectRejected('{"\\/":1, "/":2}', 'duplicate_key', 9);
    expectRejected('[{"x":{"a":1,"b":2,"a":3}}]', 'duplicate_key', 19);
    expect(parseError('{"__proto__":1,"__proto__":2}').message).toContain('"__proto__"');
  });

  it('rejects a duplicate key in a large object without scanning every key each time', () => {
    const members = Array.from({ length: 100_000 }, (_, index) => `"k${index}":${index}`);
    const source = `{${members.join(',')},"k99999":0}`;
    expectRejected(source, 'duplicate_key', source.lastIndexOf('"k99999"'));
  });

  it('rejects nesting deeper than 512 by default, at the first bracket too many', () => {
    expect(() => parseStrict('['.repeat(512) + ']'.repeat(512))).not.toThrow();
    expectRejected('['.repeat(513) + ']'.repeat(513), 'too_deep', 512);
    expectRejected('{"a":'.repeat(600), 'too_deep', 512 * 5);
  });

  it('honours a custom maxDepth, where 0 allows scalars only', () => {
    expect(parseError('[[1]]', { maxDepth: 1 })).toMatchObject({ reason: 'too_deep', offset: 1 });
    expect(toValue(parseStrict('[[1]]', { maxDepth: 2 }))).toEqual([[1]]);
    expect(toValue(parseStrict('7', { maxDepth: 0 }))).toBe(7);
    expect(parseError('[]', { maxDepth: 0 })).toMatchObject({ reason: 'too_deep', offset: 0 });
    expect(() => parseStrict('1', { maxDepth: -1 })).toThrow(RangeError);
    expect(() => parseStrict('1', { maxDepth: Number.NaN })).toThrow(RangeError);
  });

  it('survives 100,000 open brackets without overflowing the stack, even with no depth limit', () => {
    const hostile = '['.repeat(100_000);
    expectRejected(hostile, 'too_deep', 512);
    expect(parseError(hostile, { maxDepth: Infinity })).toMatchObject({ reason: 'syntax', offset: 100_000 });
    const deep = parseStrict(hostile + ']'.repeat(100_000), { maxDepth: Infinity });
    expect(deep).toMatchObject({ kind: 'array', start: 0, end: 200_000 });
    expect(parseError('{"a":'.repeat(100_000), { maxDepth: Infinity }).reason).toBe('syntax');
  });
});

describe('parseStrict: linear work on long inputs', () => {
  it('decodes long strings, long escape runs and long numbers in linear time', () => {
    const long = 'x'.repeat(1_000_000);
    expect(toValue(parseStrict(`"${long}"`))).toBe(long);
    const escapes = '\\u0041\\n'.repeat(100_000);
    expect(toValue(parseStrict(`"${escapes}"`))).toBe('A\n'.repeat(100_000));
    const digits = '9'.repeat(1_000_000);
    expect(parseStrict(`-${digits}.${digits}e-${digits}`)).toMatchObject({ kind: 'number', end: 3_000_004 });
  });
});

describe('parseStrict: properties', () => {
  const jsonTexts = jsonText.map(({ text }) => text);
  const duplicateKeyTexts = duplicateKeyText.map(({ text }) => text);

  it('denotes what JSON.parse denotes for any whitespace and escape spelling of any value', () => {
    fc.assert(
      fc.property(jsonText, ({ text, value }) => {
        expect(JSON.parse(text)).toEqual(value);
        expect(describeExactly(toValue(parseStrict(text)))).toBe(describeExactly(JSON.parse(text)));
      }),
      { numRuns: 1000 },
    );
  });

  it('accepts exactly what JSON.parse accepts, apart from duplicate keys', () => {
    fc.assert(
      fc.property(
        fc.oneof(jsonishText, withOneEdit(jsonTexts), duplicateKeyTexts, withOneEdit(duplicateKeyTexts)),
        (source) => {
          const reference = tryJsonParse(source);
          const strict = tryParseStrict(source);
          if (strict.ok) {
            expect(reference).toMatchObject({ ok: true });
            expect(describeExactly(toValue(strict.node))).toBe(describeExactly(reference.ok && reference.value));
          } else if (strict.reason === 'syntax') {
            expect(reference).toEqual({ ok: false });
          } else {
            // A duplicate key may be reported before a later syntax error, so JSON.parse may go either way here.
            expect(strict.reason).toBe('duplicate_key');
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('rejects every duplicate key, however it is escaped, where JSON.parse keeps the last one', () => {
    fc.assert(
      fc.property(duplicateKeyText, ({ text, key, duplicateOffset }) => {
        expect(() => JSON.parse(text)).not.toThrow();
        const error = parseError(text);
        expect(error).toMatchObject({ reason: 'duplicate_key', offset: duplicateOffset });
        expect(error.message).toContain(JSON.stringify(key));
      }),
      { numRuns: 1000 },
    );
  });
});

function tryJsonParse(source: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(source) };
  } catch {
    return { ok: false };
  }
}

function tryParseStrict(
  source: string,
): { ok: true; node: JsonNode } | { ok: false; reason: JsonSyntaxError['reason'] } {
  try {
    return { ok: true, node: parseStrict(source) };
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { ok: false, reason: error.reason };
    throw error;
  }
}
