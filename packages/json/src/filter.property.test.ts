// compileFilter against a reference evaluator written independently here: bodies and filters are generated
// together with plain descriptions of the values they spell, numbers as exact BigInt decimals.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFilter, FilterSpecError } from './filter.js';
import {
  jsonishText,
  jsonNumberSpelling,
  jsonText,
  jsonWhitespace,
  spelledString,
  withOneEdit,
} from './json.testing.js';
import { parseStrict } from './parse.js';

/** m × 10^e, exactly. */
interface ExactNumber {
  m: bigint;
  e: number;
}

type Value =
  | { kind: 'null' }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: ExactNumber }
  | { kind: 'array'; items: Value[] }
  | { kind: 'object'; members: Map<string, Value> };

/** JSON text together with the value it spells. */
interface Spelled {
  text: string;
  value: Value;
}

function exactNumber(spelling: string): ExactNumber {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(spelling);
  if (match === null) throw new Error(`not a number: ${spelling}`);
  const [, sign = '', integer = '', fraction = '', exponent = '0'] = match;
  return { m: BigInt(sign + integer + fraction), e: Number(exponent) - fraction.length };
}

function compareNumbers(a: ExactNumber, b: ExactNumber): number {
  const common = Math.min(a.e, b.e);
  const left = a.m * 10n ** BigInt(a.e - common);
  const right = b.m * 10n ** BigInt(b.e - common);
  return left === right ? 0 : left < right ? -1 : 1;
}

const codePoints = (text: string): number[] => Array.from(text, (char) => char.codePointAt(0)!);

function compareStrings(a: string, b: string): number {
  const left = codePoints(a);
  const right = codePoints(b);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    if (left[i] !== right[i]) return left[i]! - right[i]!;
  }
  return left.length - right.length;
}

function valuesEqual(a: Value, b: Value): boolean {
  switch (a.kind) {
    case 'null':
      return b.kind === 'null';
    case 'boolean':
    case 'string':
      return b.kind === a.kind && b.value === a.value;
    case 'number':
      return b.kind === 'number' && compareNumbers(a.value, b.value) === 0;
    case 'array':
      return (
        b.kind === 'array' &&
        a.items.length === b.items.length &&
        a.items.every((item, index) => valuesEqual(item, b.items[index]!))
      );
    case 'object':
      return (
        b.kind === 'object' &&
        a.members.size === b.members.size &&
        [...a.members].every(([key, value]) => b.members.has(key) && valuesEqual(value, b.members.get(key)!))
      );
  }
}

function valueAt(root: Value, tokens: readonly string[]): Value | undefined {
  let current: Value | undefined = root;
  for (const token of tokens) {
    if (current?.kind === 'array') {
      current = /^(0|[1-9][0-9]*)$/.test(token) ? current.items[Number(token)] : undefined;
    } else if (current?.kind === 'object') {
      current = current.members.get(token);
    } else {
      return undefined;
    }
  }
  return current;
}

type Tree =
  | { kind: 'condition'; tokens: string[]; op: string; value: Spelled }
  | { kind: 'all' | 'any'; children: Tree[] }
  | { kind: 'not'; child: Tree };

function referenceMatches(tree: Tree, body: Value): boolean {
  switch (tree.kind) {
    case 'all':
      return tree.children.every((child) => referenceMatches(child, body));
    case 'any':
      return tree.children.some((child) => referenceMatches(child, body));
    case 'not':
      return !referenceMatches(tree.child, body);
    case 'condition':
      return conditionHolds(tree.op, tree.value.value, valueAt(body, tree.tokens));
  }
}

function conditionHolds(op: string, value: Value, found: Value | undefined): boolean {
  if (op === 'exists') return (found !== undefined) === (value.kind === 'boolean' && value.value);
  if (found === undefined) return false;
  switch (op) {
    case 'eq':
      return valuesEqual(found, value);
    case 'ne':
      return !valuesEqual(found, value);
    case 'in':
      return value.kind === 'array' && value.items.some((item) => valuesEqual(found, item));
    case 'prefix': {
      if (found.kind !== 'string' || value.kind !== 'string') return false;
      const foundPoints = codePoints(found.value);
      return codePoints(value.value).every((point, index) => foundPoints[index] === point);
    }
    default: {
      let order: number;
      if (found.kind === 'number' && value.kind === 'number') order = compareNumbers(found.value, value.value);
      else if (found.kind === 'string' && value.kind === 'string') order = compareStrings(found.value, value.value);
      else return false;
      return { gt: order > 0, gte: order >= 0, lt: order < 0, lte: order <= 0 }[op as 'gt' | 'gte' | 'lt' | 'lte'];
    }
  }
}

const treeStats = (tree: Tree): { conditions: number; depth: number } => {
  if (tree.kind === 'condition') return { conditions: 1, depth: 0 };
  const children = tree.kind === 'not' ? [tree.child] : tree.children;
  const stats = children.map(treeStats);
  return {
    conditions: stats.reduce((sum, child) => sum + child.conditions, 0),
    depth: 1 + Math.max(...stats.map((child) => child.depth)),
  };
};

const formatPointer = (tokens: readonly string[]): string =>
  tokens.map((token) => '/' + token.replaceAll('~', '~0').replaceAll('/', '~1')).join('');

function treeText(tree: Tree, space: string): string {
  switch (tree.kind) {
    case 'condition': {
      const path = `"path"${space}:${JSON.stringify(formatPointer(tree.tokens))}`;
      const rest = `"op":${space}"${tree.op}",${space}"value":${tree.value.text}`;
      return space.length % 2 === 0 ? `{${path},${rest}}` : `{${space}${rest},${path}}`;
    }
    case 'not':
      return `{"not":${space}${treeText(tree.child, space)}}`;
    default:
      return `{"${tree.kind}":[${tree.children.map((child) => treeText(child, space)).join(`,${space}`)}]}`;
  }
}

// Pools that make equal values with different spellings likely.
const numberSpelling = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ...['1000', '1.0e3', '1E3', '10e+2', '1000.000', '100000e-2', '-0', '0', '0.0', '0E5', '-1', '-1.0', '2', '1.5'],
      ...['15e-1', '0.1', '1e-1', '0.10000000000000001', '9007199254740992', '9007199254740993', '1e400', '-1e400'],
    ),
  },
  { weight: 1, arbitrary: jsonNumberSpelling },
);
const number: fc.Arbitrary<Spelled> = numberSpelling.map((text) => ({
  text,
  value: { kind: 'number', value: exactNumber(text) },
}));
const stringContent = fc.constantFrom(
  '',
  'a',
  'ab',
  'abc',
  'b',
  'A',
  'é',
  '\uffff',
  '😀',
  '😀x',
  '\ud83d',
  '\ude00',
  '~',
);
const string: fc.Arbitrary<Spelled> = spelledString(stringContent).map(({ text, value }) => ({
  text,
  value: { kind: 'string', value: value as string },
}));
const literal = fc.constantFrom<Spelled>(
  { text: 'null', value: { kind: 'null' } },
  { text: 'true', value: { kind: 'boolean', value: true } },
  { text: 'false', value: { kind: 'boolean', value: false } },
);
const keyContent = fc.constantFrom('a', 'b', 'c', '~', '/', '0', '1', '__proto__', '');

const valueTree = fc.letrec<{ value: Spelled; array: Spelled; object: Spelled }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, number, string, literal, tie('array'), tie('object')),
  array: fc.array(fc.tuple(jsonWhitespace, tie('value')), { maxLength: 3 }).map((items) => ({
    text: `[${items.map(([space, item]) => space + item.text).join(',')}]`,
    value: { kind: 'array', items: items.map(([, item]) => item.value) },
  })),
  object: fc
    .uniqueArray(fc.tuple(spelledString(keyContent), jsonWhitespace, tie('value')), {
      selector: ([key]) => key.value,
      maxLength: 3,
    })
    .map((members) => ({
      text: `{${members.map(([key, space, value]) => `${key.text}:${space}${value.text}`).join(',')}}`,
      value: { kind: 'object', members: new Map(members.map(([key, , value]) => [key.value as string, value.value])) },
    })),
}));
const jsonValue: fc.Arbitrary<Spelled> = valueTree.value;

/** Every node of a value with its pointer tokens, the root first. */
function nodesOf(root: Value): Array<{ tokens: string[]; value: Value }> {
  const nodes: Array<{ tokens: string[]; value: Value }> = [];
  const visit = (value: Value, tokens: string[]): void => {
    nodes.push({ tokens, value });
    if (value.kind === 'array') value.items.forEach((item, index) => visit(item, [...tokens, String(index)]));
    if (value.kind === 'object') value.members.forEach((member, key) => visit(member, [...tokens, key]));
  };
  visit(root, []);
  return nodes;
}

const ABSENT_POINTERS: string[][] = [['zz'], ['a', 'zz'], ['0', '9'], ['01'], ['-'], ['a', '0', 'b'], ['']];

const spellValue = (value: Value): Spelled => ({ text: spell(value), value });

/** A plain spelling of a value taken from the body, to be compared with its original, differently spelled text. */
function spell(value: Value): string {
  switch (value.kind) {
    case 'null':
      return 'null';
    case 'boolean':
      return String(value.value);
    case 'string':
      return JSON.stringify(value.value);
    case 'number':
      return `${value.value.m}e${value.value.e}`;
    case 'array':
      return `[${value.items.map(spell).join(',')}]`;
    case 'object':
      return `{${[...value.members].map(([key, member]) => `${JSON.stringify(key)}:${spell(member)}`).join(',')}}`;
  }
}

/**
 * Filter trees with at most `maxLevels` nested groups, whose pointers come from `pointers` and whose comparison
 * values are drawn from the pools above or from `bodyValues` (so that eq, in and friends often match).
 */
function filterTree(maxLevels: number, pointers: fc.Arbitrary<string[]>, bodyValues: Value[]): fc.Arbitrary<Tree> {
  /** A spelling of one of the body's values that satisfies `accept`, when there is one. */
  const fromBody = (accept: (value: Value) => boolean): Array<fc.Arbitrary<Spelled>> => {
    const accepted = bodyValues.filter(accept);
    return accepted.length > 0 ? [fc.constantFrom(...accepted).map(spellValue)] : [];
  };
  const anyValue = fc.oneof(jsonValue, ...fromBody(() => true));
  const ordered = fc.oneof(number, string, ...fromBody((value) => value.kind === 'number' || value.kind === 'string'));
  const valueFor: Record<string, fc.Arbitrary<Spelled>> = {
    eq: anyValue,
    ne: anyValue,
    in: fc.array(anyValue, { minLength: 1, maxLength: 4 }).map((items) => ({
      text: `[${items.map((item) => item.text).join(',')}]`,
      value: { kind: 'array', items: items.map((item) => item.value) },
    })),
    exists: literal.filter((value) => value.value.kind === 'boolean'),
    gt: ordered,
    gte: ordered,
    lt: ordered,
    lte: ordered,
    prefix: fc.oneof(string, ...fromBody((value) => value.kind === 'string')),
  };
  const condition: fc.Arbitrary<Tree> = fc
    .constantFrom(...Object.keys(valueFor))
    .chain((op) =>
      fc.tuple(pointers, valueFor[op]!).map(([tokens, value]): Tree => ({ kind: 'condition', tokens, op, value })),
    );
  let tree = condition;
  for (let level = 1; level <= maxLevels; level++) {
    const child = tree;
    tree = fc.oneof(
      { weight: 4, arbitrary: condition },
      ...(['all', 'any'] as const).map((kind) => ({
        weight: 1,
        arbitrary: fc.array(child, { minLength: 1, maxLength: 3 }).map((children): Tree => ({ kind, children })),
      })),
      { weight: 1, arbitrary: child.map((inner): Tree => ({ kind: 'not', child: inner })) },
    );
  }
  return tree;
}

/** A body, and a filter over it whose pointers mostly name values present in the body. */
const bodyAndFilter = (maxLevels: number): fc.Arbitrary<{ body: Spelled; tree: Tree; space: string }> =>
  jsonValue.chain((body) => {
    const nodes = nodesOf(body.value);
    const pointers = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...nodes.map((node) => node.tokens)) },
      { weight: 1, arbitrary: fc.constantFrom(...ABSENT_POINTERS) },
    );
    const tree = filterTree(
      maxLevels,
      pointers,
      nodes.map((node) => node.value),
    );
    return fc.record({ body: fc.constant(body), tree, space: jsonWhitespace });
  });

describe('compileFilter (properties)', () => {
  it('agrees with a reference evaluator, and refuses exactly the filters past the limits', () => {
    fc.assert(
      fc.property(bodyAndFilter(6), ({ body, tree, space }) => {
        const source = treeText(tree, space);
        const { conditions, depth } = treeStats(tree);
        if (conditions > 50 || depth > 5) {
          expect(() => compileFilter(source)).toThrow(FilterSpecError);
          return;
        }
        const filter = compileFilter(source);
        expect(filter).toMatchObject({ conditionCount: conditions, depth });
        expect(filter.matches(parseStrict(body.text))).toBe(referenceMatches(tree, body.value));
      }),
      { numRuns: 2000 },
    );
  });

  it('makes each condition true for some bodies and false for others', () => {
    // Guards the generators: a reference that always agreed because every condition was false would prove nothing.
    const outcomes = new Set<string>();
    fc.assert(
      fc.property(bodyAndFilter(0), ({ body, tree }) => {
        const matched = compileFilter(treeText(tree, '')).matches(parseStrict(body.text));
        if (tree.kind === 'condition') outcomes.add(`${tree.op}:${matched}`);
        expect(matched).toBe(referenceMatches(tree, body.value));
      }),
      { numRuns: 1000 },
    );
    const ops = ['eq', 'ne', 'in', 'exists', 'gt', 'gte', 'lt', 'lte', 'prefix'];
    expect([...outcomes].sort()).toEqual(ops.flatMap((op) => [`${op}:false`, `${op}:true`]).sort());
  });

  it('not is the complement, and all or any of one filter is that filter', () => {
    fc.assert(
      fc.property(bodyAndFilter(2), ({ body, tree, space }) => {
        const text = treeText(tree, space);
        const parsed = parseStrict(body.text);
        const expected = compileFilter(text).matches(parsed);
        expect(compileFilter(`{"not":${text}}`).matches(parsed)).toBe(!expected);
        expect(compileFilter(`{"all":[${text}]}`).matches(parsed)).toBe(expected);
        expect(compileFilter(`{"any":[${text}]}`).matches(parsed)).toBe(expected);
        expect(compileFilter(`{"not":{"not":${text}}}`).matches(parsed)).toBe(expected);
        expect(compileFilter(`{"not":{"any":[{"not":${text}},{"not":${text}}]}}`).matches(parsed)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  const filterTexts = fc
    .tuple(filterTree(3, fc.constantFrom(...ABSENT_POINTERS, [], ['a']), []), jsonWhitespace)
    .map(([tree, space]) => treeText(tree, space));
  const filterKeys = fc.constantFrom('all', 'any', 'not', 'path', 'op', 'value', 'x');
  /** Objects built from filter keys with arbitrary values: near misses of valid filters. */
  const filterLike = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      jsonText.map((json) => json.text),
      fc.array(tie('node'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
      fc
        .uniqueArray(fc.tuple(filterKeys, fc.oneof(tie('node'), fc.constantFrom('"eq"', '"in"', '"/a"', '"a"'))), {
          selector: ([key]) => key,
          maxLength: 4,
        })
        .map((members) => `{${members.map(([key, value]) => `"${key}":${value}`).join(',')}}`),
    ),
  })).node;

  it('throws nothing but FilterSpecError, and what it compiles evaluates without throwing', () => {
    const bodies = ['{"a":1}', '[]', 'null', '{"a":{"b":[1,"x"]}}'].map((body) => parseStrict(body));
    fc.assert(
      fc.property(
        fc.oneof(
          jsonishText,
          jsonText.map((json) => json.text),
          withOneEdit(filterTexts),
          filterLike,
        ),
        (source) => {
          let filter;
          try {
            filter = compileFilter(source);
          } catch (error) {
            expect(error).toBeInstanceOf(FilterSpecError);
            expect(typeof (error as FilterSpecError).path).toBe('string');
            return;
          }
          for (const body of bodies) expect(typeof filter.matches(body)).toBe('boolean');
        },
      ),
      { numRuns: 2000 },
    );
  });
});
