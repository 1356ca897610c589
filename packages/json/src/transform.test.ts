import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  describeExactly,
  jsonishText,
  jsonKey,
  jsonText,
  jsonWhitespace,
  spelledString,
  withOneEdit,
} from './json.testing.js';
import { minify, rawText } from './minify.js';
import type { JsonNode } from './node.js';
import { parseStrict } from './parse.js';
import { resolvePointer } from './pointer.js';
import { compileTransform, TransformSpecError } from './transform.js';
import type { TransformResult } from './transform.js';

const transform = (source: string, body: string): TransformResult =>
  compileTransform(source).apply(body, parseStrict(body));

const fieldsOf = (...fields: string[]): string => `{"fields":[${fields.join(',')}]}`;
const copy = (name: string, from: string, required?: boolean): string =>
  `{"name":${JSON.stringify(name)},"from":${JSON.stringify(from)}${required === undefined ? '' : `,"required":${required}`}}`;

/** The location and message of the TransformSpecError that compiling `source` throws. */
function specError(source: string): { path: string; message: string } {
  try {
    compileTransform(source);
  } catch (error) {
    expect(error).toBeInstanceOf(TransformSpecError);
    const { path, message } = error as TransformSpecError;
    return { path, message };
  }
  throw new Error(`expected ${source} to be refused`);
}

describe('compileTransform', () => {
  it('copies values with their exact bytes, minified', () => {
    const body = '{ "n" : 1.0e3, "s": "caf\\u00e9 \\/", "o": { "x" : [ 1 , 2.50, -0 ] , "e": "\\ud83d\\ude00" } }';
    expect(transform(fieldsOf(copy('n', '/n'), copy('s', '/s'), copy('o', '/o')), body)).toEqual({
      ok: true,
      output: '{"n":1.0e3,"o":{"x":[1,2.50,-0],"e":"\\ud83d\\ude00"},"s":"caf\\u00e9 \\/"}',
    });
  });

  it('writes literals with their exact bytes, minified', () => {
    const source =
      '{"fields":[{"name":"v","value": { "k" : 1.0E3 , "t" : "\\u00e9" , "l": [ true, null ] }},{"name":"n","value":1e400}]}';
    expect(transform(source, '{}')).toEqual({
      ok: true,
      output: '{"n":1e400,"v":{"k":1.0E3,"t":"\\u00e9","l":[true,null]}}',
    });
  });

  it('sorts members by the code points of their decoded names', () => {
    const names = ['b', '😀', 'a', '\uffff', 'é', 'A', 'ab', '10', '9', ''];
    const fields = names.filter((name) => name !== '').map((name) => `{"name":${JSON.stringify(name)},"value":0}`);
    // By UTF-16 code units, '😀' (D83D DE00) would come before '\uffff'.
    expect(transform(fieldsOf(...fields), '{}')).toEqual({
      ok: true,
      output: '{"10":0,"9":0,"A":0,"a":0,"ab":0,"b":0,"é":0,"\uffff":0,"😀":0}',
    });
    expect(compileTransform(fieldsOf(...fields)).fieldNames).toEqual([
      '10',
      '9',
      'A',
      'a',
      'ab',
      'b',
      'é',
      '\uffff',
      '😀',
    ]);
  });

  it('writes names as JSON.stringify does, whatever their spelling in the transform', () => {
    const source =
      '{"fields":[{"name":"\\u0041","value":1},{"name":"q\\"\\/","value":2},{"name":"t\\u0009","value":3}]}';
    expect(transform(source, '{}')).toEqual({ ok: true, output: '{"A":1,"q\\"/":2,"t\\t":3}' });
  });

  it('copies the whole body with the empty pointer and follows canonical array indexes', () => {
    const body = ' [ 10 , {"a/b": {"~": "x"}} ] ';
    const source = fieldsOf(copy('all', ''), copy('second', '/1/a~1b/~0'), copy('bad', '/01'), copy('end', '/-'));
    expect(transform(source, body)).toEqual({ ok: true, output: '{"all":[10,{"a/b":{"~":"x"}}],"second":"x"}' });
  });

  it('omits a missing optional field and fails on a missing required one', () => {
    const body = '{"a":null,"b":false}';
    expect(transform(fieldsOf(copy('a', '/a', true), copy('b', '/b'), copy('c', '/c', false)), body)).toEqual({
      ok: true,
      output: '{"a":null,"b":false}',
    });
    expect(transform(fieldsOf(copy('a', '/a'), copy('z', '/missing', true), copy('y', '/y/0', true)), body)).toEqual({
      ok: false,
      field: 'y',
      message: 'required pointer "/y/0" is missing',
    });
    expect(transform(fieldsOf(copy('only', '/none')), body)).toEqual({ ok: true, output: '{}' });
  });

  it('applies one compiled transform to many bodies', () => {
    const compiled = compileTransform(fieldsOf(copy('id', '/id', true), `{"name":"v","value":2}`));
    const apply = (body: string): TransformResult => compiled.apply(body, parseStrict(body));
    expect([apply('{"id":"x"}'), apply('{"id":[1]}'), apply('{}')]).toEqual([
      { ok: true, output: '{"id":"x","v":2}' },
      { ok: true, output: '{"id":[1],"v":2}' },
      { ok: false, field: 'id', message: 'required pointer "/id" is missing' },
    ]);
  });

  it('accepts 50 fields and names of 128 UTF-8 bytes', () => {
    const fields = Array.from({ length: 50 }, (_, index) => `{"name":"f${index}","value":${index}}`);
    expect(compileTransform(fieldsOf(...fields)).fieldNames).toHaveLength(50);
    expect(compileTransform(fieldsOf(copy('x'.repeat(128), '/a'), copy('é'.repeat(64), '/b'))).fieldNames).toEqual([
      'x'.repeat(128),
      'é'.repeat(64),
    ]);
  });

  it.each([
    ['not json', ''],
    ['{"fields":[{"name":"a","value":1}', ''],
    ['{"fields":[{"name":"a","value":1}],"fields":[]}', ''],
    ['[]', ''],
    ['null', ''],
    ['{}', 'fields'],
    ['{"fields":[]}', 'fields'],
    ['{"fields":{"name":"a","value":1}}', 'fields'],
    ['{"fields":[{"name":"a","value":1}],"extra":true}', 'extra'],
    ['{"Fields":[{"name":"a","value":1}]}', 'Fields'],
    ['{"fields":["a"]}', 'fields.0'],
    ['{"fields":[{"name":"a","value":1},null]}', 'fields.1'],
    ['{"fields":[{"from":"/a"}]}', 'fields.0.name'],
    ['{"fields":[{"name":1,"from":"/a"}]}', 'fields.0.name'],
    ['{"fields":[{"name":"","from":"/a"}]}', 'fields.0.name'],
    [fieldsOf(copy('x'.repeat(129), '/a')), 'fields.0.name'],
    [fieldsOf(copy('é'.repeat(65), '/a')), 'fields.0.name'],
    [fieldsOf(copy('a', '/a'), copy('b', '/b'), copy('a', '/c')), 'fields.2.name'],
    ['{"fields":[{"name":"a","value":1},{"name":"\\u0061","value":2}]}', 'fields.1.name'],
    ['{"fields":[{"name":"a","from":"/a","value":1}]}', 'fields.0'],
    ['{"fields":[{"name":"a"}]}', 'fields.0'],
    ['{"fields":[{"name":"a","required":true}]}', 'fields.0'],
    ['{"fields":[{"name":"a","value":1,"required":true}]}', 'fields.0.required'],
    ['{"fields":[{"name":"a","from":"/a","required":"yes"}]}', 'fields.0.required'],
    ['{"fields":[{"name":"a","from":"/a","required":null}]}', 'fields.0.required'],
    ['{"fields":[{"name":"a","from":1}]}', 'fields.0.from'],
    ['{"fields":[{"name":"a","from":"a"}]}', 'fields.0.from'],
    ['{"fields":[{"name":"a","from":"/~"}]}', 'fields.0.from'],
    ['{"fields":[{"name":"a","from":"/a","extra":1}]}', 'fields.0.extra'],
    ['{"fields":[{"name":"a","value":1,"from2":"/a"}]}', 'fields.0.from2'],
  ])('refuses %s at %j', (source, path) => {
    expect(specError(source).path).toBe(path);
  });

  it('refuses more than 50 fields', () => {
    const fields = Array.from({ length: 51 }, (_, index) => `{"name":"f${index}","value":${index}}`);
    expect(specError(fieldsOf(...fields))).toEqual({
      path: 'fields',
      message: 'fields is an array of 1 to 50 fields, got 51 fields',
    });
  });

  it('explains what was expected', () => {
    expect(specError(fieldsOf(copy('a', '/a'), copy('a', '/b'))).message).toBe(
      'duplicate field name "a" (also fields.0.name)',
    );
    expect(specError(fieldsOf(copy('é'.repeat(65), '/a'))).message).toBe('name must be 1 to 128 UTF-8 bytes, got 130');
    expect(specError('{"fields":[{"name":"a","value":1,"required":true}]}').message).toBe(
      'unknown key "required": required applies only to fields copied with from',
    );
    expect(specError('[').message).toMatch(/^the transform is not valid JSON: /);
  });
});

/** The value at `tokens` in a JSON.parse-like value, or undefined; array indexes must be canonical. */
function valueAt(root: unknown, tokens: readonly string[]): unknown {
  let current = root;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= current.length) return undefined;
      current = current[Number(token)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return current;
}

function pointersIn(root: unknown): string[][] {
  const pointers: string[][] = [];
  const visit = (value: unknown, tokens: string[]): void => {
    pointers.push(tokens);
    if (typeof value !== 'object' || value === null) return;
    for (const key of Object.keys(value)) visit((value as Record<string, unknown>)[key], [...tokens, key]);
  };
  visit(root, []);
  return pointers;
}

function resolvePointerOrFail(root: JsonNode, tokens: string[]): JsonNode {
  const node = resolvePointer(root, tokens);
  if (node === undefined) throw new Error(`nothing at ${formatPointer(tokens)}`);
  return node;
}

const formatPointer = (tokens: readonly string[]): string =>
  tokens.map((token) => '/' + token.replaceAll('~', '~0').replaceAll('/', '~1')).join('');

function compareByCodePoints(a: string, b: string): number {
  const left = Array.from(a, (char) => char.codePointAt(0)!);
  const right = Array.from(b, (char) => char.codePointAt(0)!);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    if (left[i] !== right[i]) return left[i]! - right[i]!;
  }
  return left.length - right.length;
}

type Field = { name: { text: string; value: string }; space: string } & (
  | { kind: 'copy'; tokens: string[]; required: boolean | undefined }
  | { kind: 'literal'; literal: { text: string; value: unknown } }
);

const fieldName = fc.oneof(
  spelledString(
    fc.constantFrom('a', 'b', 'A', 'é', '\uffff', '😀', '10', '9', '__proto__', 'a b', '"q"', 'x'.repeat(128)),
  ),
  jsonKey.filter((key) => key.value !== ''),
) as fc.Arbitrary<{ text: string; value: string }>;

/** A body and a transform over it whose pointers mostly name values in the body. */
const bodyAndFields = jsonText.chain((body) => {
  const pointers = [...pointersIn(body.value), ['zz'], ['0', 'zz'], ['01']];
  const field: fc.Arbitrary<Field> = fc.oneof(
    fc.record({
      kind: fc.constant('copy' as const),
      name: fieldName,
      space: jsonWhitespace,
      tokens: fc.constantFrom(...pointers),
      required: fc.constantFrom(true, false, undefined),
    }),
    fc.record({ kind: fc.constant('literal' as const), name: fieldName, space: jsonWhitespace, literal: jsonText }),
  );
  return fc.record({
    body: fc.constant(body),
    fields: fc.uniqueArray(field, { selector: (f) => f.name.value, minLength: 1, maxLength: 6 }),
  });
});

function transformText(fields: readonly Field[]): string {
  const texts = fields.map((field) => {
    const name = `"name":${field.space}${field.name.text}`;
    if (field.kind === 'literal') return `{${name},"value":${field.literal.text}}`;
    const required = field.required === undefined ? '' : `,${field.space}"required":${field.required}`;
    return `{"from":${JSON.stringify(formatPointer(field.tokens))}${required},${name}}`;
  });
  return `{ "fields" : [${texts.join(', ')}] }`;
}

describe('compileTransform (properties)', () => {
  it('builds the sorted object a walk of the body gives, copying exact minified bytes', () => {
    fc.assert(
      fc.property(bodyAndFields, ({ body, fields }) => {
        const result = compileTransform(transformText(fields)).apply(body.text, parseStrict(body.text));
        const sorted = [...fields].sort((a, b) => compareByCodePoints(a.name.value, b.name.value));
        const missing = sorted.find(
          (field) =>
            field.kind === 'copy' && field.required === true && valueAt(body.value, field.tokens) === undefined,
        );
        if (missing !== undefined) {
          expect(result).toMatchObject({ ok: false, field: missing.name.value });
          return;
        }
        if (!result.ok) throw new Error(`unexpected failure: ${result.message}`);
        const present = sorted.filter(
          (field) => field.kind === 'literal' || valueAt(body.value, field.tokens) !== undefined,
        );

        const expected: Record<string, unknown> = {};
        for (const field of present) {
          const value = field.kind === 'literal' ? field.literal.value : valueAt(body.value, field.tokens);
          Object.defineProperty(expected, field.name.value, {
            value,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        }
        expect(describeExactly(JSON.parse(result.output))).toBe(describeExactly(expected));
        expect(minify(result.output)).toBe(result.output);

        const output = parseStrict(result.output);
        if (output.kind !== 'object') throw new Error('output is not an object');
        expect(output.members.map((member) => member.key)).toEqual(present.map((field) => field.name.value));
        output.members.forEach((member, index) => {
          const field = present[index]!;
          const source = field.kind === 'literal' ? field.literal.text : body.text;
          const node = parseStrict(source);
          const expectedText =
            field.kind === 'literal' ? minify(source, node) : rawText(source, resolvePointerOrFail(node, field.tokens));
          expect(rawText(result.output, member.value)).toBe(expectedText);
        });
      }),
      { numRuns: 1500 },
    );
  });

  const transformLike = fc.oneof(
    bodyAndFields.map(({ fields }) => transformText(fields)),
    fc
      .array(fc.tuple(fc.constantFrom('name', 'from', 'value', 'required', 'x'), jsonText), { maxLength: 4 })
      .map((members) => `{"fields":[{${members.map(([key, value]) => `"${key}":${value.text}`).join(',')}}]}`),
  );

  it('throws nothing but TransformSpecError, and what it compiles applies without throwing', () => {
    const bodies = ['{"a":1}', '[]', 'null', '{"a":{"b":[1,"x"]}}'];
    fc.assert(
      fc.property(
        fc.oneof(
          jsonishText,
          jsonText.map((json) => json.text),
          withOneEdit(transformLike),
          transformLike,
        ),
        (source) => {
          let compiled;
          try {
            compiled = compileTransform(source);
          } catch (error) {
            expect(error).toBeInstanceOf(TransformSpecError);
            expect(typeof (error as TransformSpecError).path).toBe('string');
            return;
          }
          for (const body of bodies) {
            const result = compiled.apply(body, parseStrict(body));
            if (result.ok) expect(parseStrict(result.output).kind).toBe('object');
            else expect(result.message).toMatch(/^required pointer ".*" is missing$/s);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
