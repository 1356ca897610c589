import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeExactly, jsonText } from './json.testing.js';
import { rawText } from './minify.js';
import { parseStrict } from './parse.js';
import { formatPointer, parsePointer, resolvePointer } from './pointer.js';
import { toValue } from './value.js';

describe('parsePointer', () => {
  it.each([
    ['', []],
    ['/', ['']],
    ['/a/b', ['a', 'b']],
    ['//', ['', '']],
    ['/a~1b', ['a/b']],
    ['/m~0n', ['m~n']],
    ['/~01', ['~1']],
    ['/~10', ['/0']],
    ['/ ', [' ']],
    ['/0/-', ['0', '-']],
  ])('parses %j', (pointer, tokens) => {
    expect(parsePointer(pointer)).toEqual(tokens);
  });

  it.each(['a', 'a/b', '#/a', '/~', '/~2', '/a~', '/~a', '/~~0'])('rejects %j', (pointer) => {
    expect(parsePointer(pointer)).toBeNull();
  });
});

describe('resolvePointer', () => {
  const source = '{"foo":["bar","baz"],"":0,"a/b":1,"c%d":2,"e^f":3,"g|h":4,"i\\\\j":5,"k\\"l":6," ":7,"m~n":8,"01":9}';
  const root = parseStrict(source);
  const valueAt = (pointer: string | string[]): unknown => {
    const node = resolvePointer(root, pointer);
    return node === undefined ? undefined : toValue(node);
  };

  it.each([
    ['', JSON.parse(source)],
    ['/foo', ['bar', 'baz']],
    ['/foo/0', 'bar'],
    ['/', 0],
    ['/a~1b', 1],
    ['/c%d', 2],
    ['/e^f', 3],
    ['/g|h', 4],
    ['/i\\j', 5],
    ['/k"l', 6],
    ['/ ', 7],
    ['/m~0n', 8],
    ['/01', 9],
  ])('resolves the RFC 6901 example %j', (pointer, expected) => {
    expect(valueAt(pointer)).toEqual(expected);
  });

  it.each(['/foo/01', '/foo/-', '/foo/2', '/foo/1.0', '/foo/+1', '/foo/ 1', '/foo/0/x', '/missing', '/~2', 'foo'])(
    'finds nothing at %j',
    (pointer) => {
      expect(resolvePointer(root, pointer)).toBeUndefined();
    },
  );

  it('accepts already split tokens, unescaped', () => {
    expect(valueAt(['a/b'])).toBe(1);
    expect(valueAt(['m~n'])).toBe(8);
    expect(valueAt(['foo', '1'])).toBe('baz');
  });

  it('does not follow inherited properties', () => {
    const node = parseStrict('{"a":[1]}');
    expect(resolvePointer(node, '/constructor')).toBeUndefined();
    expect(resolvePointer(node, '/__proto__')).toBeUndefined();
    expect(resolvePointer(node, '/a/length')).toBeUndefined();
  });
});

describe('pointer: properties', () => {
  it('finds, for every path into a value, the node whose value and raw text are the value at that path', () => {
    fc.assert(
      fc.property(jsonText, ({ text }) => {
        const root = parseStrict(text);
        const paths = allPaths(JSON.parse(text));
        // One assertion per run, not per path: it keeps 1,000 runs fast and the failure shows the whole document.
        const found = paths.map(([path]) => {
          const pointer = formatPointer(path);
          const node = resolvePointer(root, pointer);
          if (node === undefined) return { pointer, missing: true };
          const sameNodeFromTokens = resolvePointer(root, path) === node;
          const tokens = parsePointer(pointer);
          return {
            pointer,
            tokens,
            sameNodeFromTokens,
            value: describeExactly(toValue(node)),
            raw: describeExactly(JSON.parse(rawText(text, node))),
          };
        });
        const expected = paths.map(([path, value]) => {
          const exactly = describeExactly(value);
          return { pointer: formatPointer(path), tokens: path, sameNodeFromTokens: true, value: exactly, raw: exactly };
        });
        expect(found).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('round-trips any list of tokens through formatPointer and parsePointer', () => {
    const token = fc.string({ unit: fc.constantFrom('~', '/', '0', '1', 'a', '~0', '~1') });
    fc.assert(
      fc.property(fc.array(token), (tokens) => {
        expect(parsePointer(formatPointer(tokens))).toEqual(tokens);
      }),
      { numRuns: 1000 },
    );
  });
});

/** Every [path, value] pair in a JSON.parse result, the root included, by walking the JS value. */
function allPaths(root: unknown): Array<[string[], unknown]> {
  const found: Array<[string[], unknown]> = [];
  const pending: Array<[string[], unknown]> = [[[], root]];
  while (pending.length > 0) {
    const [path, value] = pending.pop()!;
    found.push([path, value]);
    if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        pending.push([[...path, key], (value as Record<string, unknown>)[key]]);
      }
    }
  }
  return found;
}
