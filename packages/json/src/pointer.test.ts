import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeExactly, jsonText } from './json.testing.js';
import { rawText } from './minify.js';
import { parseStrict } from './parse.js';
import { formatPointer, JSON_POINTER_PATTERN, parsePointer, resolvePointer } from './pointer.js';
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

/**
 * Runs a pattern in a worker thread, so that a pattern that backtracks for hours fails the test after `limitMs`
 * instead of freezing the run: the worker is terminated, which interrupts the match.
 */
function matchWithin(pattern: RegExp, input: string, limitMs: number): Promise<'done' | 'timed out'> {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     new RegExp(workerData.source, workerData.flags).test(workerData.input);
     parentPort.postMessage('done');`,
    { eval: true, workerData: { source: pattern.source, flags: pattern.flags, input } },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve('timed out');
    }, limitMs);
    worker.once('error', reject);
    worker.once('message', () => {
      clearTimeout(timer);
      void worker.terminate();
      resolve('done');
    });
  });
}

describe('JSON_POINTER_PATTERN', () => {
  it('accepts exactly the pointers parsePointer accepts', () => {
    const pointerish = fc.string({ unit: fc.constantFrom('/', '~', '0', '1', '2', 'a', '\u00e9') });
    fc.assert(
      fc.property(fc.oneof(pointerish, fc.string()), (text) => {
        expect(JSON_POINTER_PATTERN.test(text)).toBe(parsePointer(text) !== null);
      }),
    );
  });

  // The pattern is published as the OpenAPI `pattern` of event_type_path, so clients run it too. Its old form,
  // ^(\/([^~]|~[01])*)*$, took 7 s on 30 slashes and a `~`: `/` could be matched two ways.
  it.each([
    ['slashes then a tilde', '/'.repeat(511) + '~'],
    ['slash-tilde pairs', '/~'.repeat(256)],
    ['tokens then a bad escape', '/a'.repeat(255) + '~2'],
    ['escapes then a bad one', '/~0/~1'.repeat(85) + '/~'],
    ['a whole body of slashes then a tilde', '/'.repeat(1_048_575) + '~'],
  ])('answers %s at once', async (_name, attack) => {
    expect(await matchWithin(JSON_POINTER_PATTERN, attack, 2_000)).toBe('done');
  });
});
