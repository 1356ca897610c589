import { describe, expect, it } from 'vitest';
import { compileFilter, FilterSpecError } from './filter.js';
import { parseStrict } from './parse.js';

/** Filter text for one condition; `value` is JSON text so that number spellings and escapes reach the filter. */
const condition = (path: string, op: string, value: string): string =>
  `{"path":${JSON.stringify(path)},"op":${JSON.stringify(op)},"value":${value}}`;

const matches = (filter: string, body: string): boolean => compileFilter(filter).matches(parseStrict(body));

/** Whether the condition `/x <op> <value>` matches `{"x": <found>}`, or `{}` when found is undefined. */
const matchesAtX = (op: string, value: string, found: string | undefined): boolean =>
  matches(condition('/x', op, value), found === undefined ? '{}' : `{"x":${found}}`);

/** The location and message of the FilterSpecError that compiling `source` throws. */
function specError(source: string): { path: string; message: string } {
  try {
    compileFilter(source);
  } catch (error) {
    expect(error).toBeInstanceOf(FilterSpecError);
    const { path, message } = error as FilterSpecError;
    return { path, message };
  }
  throw new Error(`expected ${source} to be refused`);
}

const nestedNot = (levels: number, inner: string): string => '{"not":'.repeat(levels) + inner + '}'.repeat(levels);
const someCondition = condition('/a', 'exists', 'true');
const conditions = (count: number): string => Array.from({ length: count }, () => someCondition).join(',');

describe('compileFilter: eq and ne', () => {
  it.each([
    ['1000', '1.0e3'],
    ['1.0e3', '1000'],
    ['1E+3', '10000e-1'],
    ['-0', '0'],
    ['0.0', '-0e7'],
    ['9007199254740993', '9007199254740993.0'],
    ['123456789012345678901234567890', '1.2345678901234567890123456789e29'],
    ['"\\u00e9t\\u00E9"', '"été"'],
    ['"a\\/b\\n"', '"a/b\\u000a"'],
    ['"\\ud83d\\ude00"', '"😀"'],
    ['null', 'null'],
    ['true', 'true'],
    ['[1,"a",[]]', '[1.0, "\\u0061", [ ]]'],
    ['{"a":1,"b":[2]}', '{"b":[2e0],"a":1}'],
  ])('%s eq %s', (value, found) => {
    expect(matchesAtX('eq', value, found)).toBe(true);
    expect(matchesAtX('ne', value, found)).toBe(false);
  });

  it.each([
    ['0.1', '0.10000000000000001'],
    ['9007199254740992', '9007199254740993'],
    ['1e400', '1e401'],
    ['1', '"1"'],
    ['null', 'false'],
    ['false', '0'],
    ['""', 'null'],
    ['"é"', '"e\\u0301"'],
    ['[1,2]', '[2,1]'],
    ['[1]', '[1,1]'],
    ['{"a":1}', '{"a":1,"b":1}'],
    ['{}', '[]'],
  ])('%s ne %s', (value, found) => {
    expect(matchesAtX('eq', value, found)).toBe(false);
    expect(matchesAtX('ne', value, found)).toBe(true);
  });

  it.each(['null', '0', '""', 'false', '[]', '{}'])('neither eq nor ne %s matches a missing value', (value) => {
    expect(matchesAtX('eq', value, undefined)).toBe(false);
    expect(matchesAtX('ne', value, undefined)).toBe(false);
  });

  it('compares the whole body with the empty pointer', () => {
    expect(matches(condition('', 'eq', '{"a":[1e0]}'), ' { "a" : [ 1 ] } ')).toBe(true);
    expect(matches(condition('', 'eq', '5'), '5.00')).toBe(true);
  });
});

describe('compileFilter: in', () => {
  const mixed = '[1, "a", null, [1], {"x": true}, 1e400]';

  it.each(['1.0', '"\\u0061"', 'null', '[1e0]', '{"x":true}', '10e399'])(
    'finds %s in a list of mixed types',
    (found) => {
      expect(matchesAtX('in', mixed, found)).toBe(true);
    },
  );

  it.each(['false', '"1"', '2', '[]', '{"x":false}', '[[1]]', '0.99999999999999999999'])(
    'does not find %s in a list of mixed types',
    (found) => {
      expect(matchesAtX('in', mixed, found)).toBe(false);
    },
  );

  it('never matches a missing value, even with null in the list', () => {
    expect(matchesAtX('in', '[null]', undefined)).toBe(false);
  });

  it('accepts 50 values', () => {
    const values = Array.from({ length: 50 }, (_, index) => String(index));
    expect(matchesAtX('in', `[${values.join(',')}]`, '49.0')).toBe(true);
  });
});

describe('compileFilter: exists', () => {
  it.each([
    ['null', true],
    ['false', true],
    ['0', true],
    ['""', true],
    ['[]', true],
    [undefined, false],
  ])('exists true/false against %s', (found, present) => {
    expect(matchesAtX('exists', 'true', found)).toBe(present);
    expect(matchesAtX('exists', 'false', found)).toBe(!present);
  });

  it('follows pointers into arrays with canonical indexes only', () => {
    const body = '{"list":[10,20],"a/b":{"~":0}}';
    expect(matches(condition('/list/1', 'exists', 'true'), body)).toBe(true);
    expect(matches(condition('/list/2', 'exists', 'true'), body)).toBe(false);
    expect(matches(condition('/list/01', 'exists', 'true'), body)).toBe(false);
    expect(matches(condition('/list/-', 'exists', 'true'), body)).toBe(false);
    expect(matches(condition('/a~1b/~0', 'exists', 'true'), body)).toBe(true);
    expect(matches(condition('/list/1/x', 'exists', 'false'), body)).toBe(true);
    expect(matches(condition('', 'exists', 'true'), 'null')).toBe(true);
  });
});

describe('compileFilter: gt, gte, lt, lte', () => {
  /** The four comparisons of found against value, as [gt, gte, lt, lte]. */
  const comparisons = (value: string, found: string | undefined): boolean[] =>
    ['gt', 'gte', 'lt', 'lte'].map((op) => matchesAtX(op, value, found));

  it.each([
    ['999.999', '1.0e3'],
    ['9007199254740992', '9007199254740993'],
    ['1e399', '1e400'],
    ['-1e400', '-1e399'],
    ['0', '1e-400'],
    ['0.1', '0.10000000000000001'],
    ['-0.5', '-0'],
    ['"a"', '"b"'],
    ['"a"', '"ab"'],
    ['""', '"\\u0000"'],
    ['"\\uffff"', '"😀"'],
    ['"Z"', '"a"'],
    ['"\\u0061"', '"\\u0062"'],
  ])('%s is below %s', (low, high) => {
    expect(comparisons(low, high)).toEqual([true, true, false, false]);
    expect(comparisons(high, low)).toEqual([false, false, true, true]);
  });

  it.each([
    ['1000', '1.0e3'],
    ['-0', '0'],
    ['"é"', '"\\u00e9"'],
  ])('%s and %s are equal', (a, b) => {
    expect(comparisons(a, b)).toEqual([false, true, false, true]);
  });

  it.each([
    ['5', '"10"'],
    ['"5"', '10'],
    ['0', 'null'],
    ['""', 'null'],
    ['0', 'false'],
    ['1', '[2]'],
    ['"a"', '{"a":"b"}'],
    ['0', undefined],
    ['""', undefined],
  ])('value %s never compares with %s', (value, found) => {
    expect(comparisons(value, found)).toEqual([false, false, false, false]);
  });
});

describe('compileFilter: prefix', () => {
  it.each([
    ['"he"', '"hello"', true],
    ['"h\\u0065"', '"\\u0068ello"', true],
    ['""', '""', true],
    ['""', '"x"', true],
    ['"hello"', '"hello"', true],
    ['"😀"', '"😀!"', true],
    ['"hello!"', '"hello"', false],
    ['"He"', '"hello"', false],
    ['"\\ud83d"', '"😀"', false],
    ['"\\ud83d"', '"\\ud83d!"', true],
    ['"1"', '123', false],
    ['""', 'null', false],
    ['""', '["a"]', false],
    ['""', undefined, false],
  ])('%s prefix of %s: %s', (value, found, expected) => {
    expect(matchesAtX('prefix', value, found)).toBe(expected);
  });
});

describe('compileFilter: groups', () => {
  const isOne = condition('/a', 'eq', '1');
  const isTwo = condition('/b', 'eq', '2');

  it.each([
    [`{"all":[${isOne},${isTwo}]}`, [true, false, false, false]],
    [`{"any":[${isOne},${isTwo}]}`, [true, true, true, false]],
    [`{"not":${isOne}}`, [false, false, true, true]],
    [`{"all":[{"not":${isOne}},{"any":[${isTwo}]}]}`, [false, false, true, false]],
    [isOne, [true, true, false, false]],
  ])('%s', (filter, expected) => {
    const bodies = ['{"a":1,"b":2}', '{"a":1}', '{"b":2.0}', '{}'];
    expect(bodies.map((body) => matches(filter, body))).toEqual(expected);
  });

  it('evaluates one compiled filter against many bodies', () => {
    const filter = compileFilter(`{"any":[${isOne},${condition('/a', 'gt', '5')}]}`);
    const bodies = ['{"a":1}', '{"a":3}', '{"a":5.5}', '{"a":"9"}', '[]'].map((body) => parseStrict(body));
    expect(bodies.map((body) => filter.matches(body))).toEqual([true, false, true, false, false]);
  });

  it('reports its condition count and depth', () => {
    expect(compileFilter(someCondition)).toMatchObject({ conditionCount: 1, depth: 0 });
    const filter = compileFilter(`{"all":[${someCondition},{"any":[{"not":${someCondition}},${someCondition}]}]}`);
    expect(filter).toMatchObject({ conditionCount: 3, depth: 3 });
  });
});

describe('compileFilter: limits', () => {
  it('accepts groups nested 5 levels deep and refuses a 6th', () => {
    expect(compileFilter(nestedNot(5, someCondition)).depth).toBe(5);
    expect(specError(nestedNot(6, someCondition))).toMatchObject({
      path: 'not.not.not.not.not',
      message: 'groups nest at most 5 levels deep',
    });
    const allChain = (levels: number): string => '{"all":['.repeat(levels) + someCondition + ']}'.repeat(levels);
    expect(matches(allChain(5), '{"a":0}')).toBe(true);
    expect(specError(allChain(6)).path).toBe('all.0.all.0.all.0.all.0.all.0');
  });

  it('accepts 50 conditions and refuses the 51st wherever it is', () => {
    expect(compileFilter(`{"all":[${conditions(50)}]}`).conditionCount).toBe(50);
    expect(compileFilter(`{"any":[{"all":[${conditions(25)}]},{"not":{"all":[${conditions(25)}]}}]}`)).toMatchObject({
      conditionCount: 50,
    });
    expect(specError(`{"any":[{"all":[${conditions(25)}]},{"all":[${conditions(26)}]}]}`)).toMatchObject({
      path: 'any.1.all.25',
      message: 'a filter has at most 50 conditions',
    });
  });

  it('refuses an all or any with more than 50 children', () => {
    expect(specError(`{"any":[${conditions(51)}]}`).path).toBe('any');
  });
});

describe('compileFilter: invalid filters', () => {
  const ok = someCondition;

  it.each([
    ['not json', ''],
    ['{"all":[', ''],
    [`{"path":"/a","path":"/b","op":"exists","value":true}`, ''],
    ['[]', ''],
    ['"eq"', ''],
    ['null', ''],
    ['{}', ''],
    [`[${ok}]`, ''],
    ['{"all":[]}', 'all'],
    ['{"any":[]}', 'any'],
    [`{"all":${ok}}`, 'all'],
    [`{"any":"x"}`, 'any'],
    [`{"all":[${ok}],"any":[${ok}]}`, ''],
    [`{"all":[${ok}],"not":${ok}}`, ''],
    [`{"all":[${ok}],"extra":1}`, 'extra'],
    [`{"not":${ok},"path":"/a"}`, 'path'],
    [`{"not":[${ok}]}`, 'not'],
    ['{"not":{}}', 'not'],
    ['{"not":null}', 'not'],
    [`{"all":[${ok},[]]}`, 'all.1'],
    [`{"all":[${ok},{"path":"/a","op":"eq","value":1,"extra":2}]}`, 'all.1.extra'],
    ['{"path":"/a","op":"eq"}', 'value'],
    ['{"path":"/a","value":1}', 'op'],
    ['{"op":"eq","value":1}', 'path'],
    ['{"path":"/a","op":"eq","value":1,"Path":"/b"}', 'Path'],
    [`{"any":[${ok},{"not":{"path":1,"op":"eq","value":1}}]}`, 'any.1.not.path'],
    ['{"path":"a","op":"eq","value":1}', 'path'],
    ['{"path":"/~2","op":"eq","value":1}', 'path'],
    ['{"path":"#/a","op":"eq","value":1}', 'path'],
    ['{"path":null,"op":"eq","value":1}', 'path'],
    ['{"path":"/a","op":"contains","value":1}', 'op'],
    ['{"path":"/a","op":"EQ","value":1}', 'op'],
    ['{"path":"/a","op":1,"value":1}', 'op'],
    ['{"path":"/a","op":"in","value":1}', 'value'],
    ['{"path":"/a","op":"in","value":[]}', 'value'],
    ['{"path":"/a","op":"in","value":{"0":1}}', 'value'],
    ['{"path":"/a","op":"exists","value":"true"}', 'value'],
    ['{"path":"/a","op":"exists","value":null}', 'value'],
    ['{"path":"/a","op":"exists","value":1}', 'value'],
    ['{"path":"/a","op":"gt","value":true}', 'value'],
    ['{"path":"/a","op":"gte","value":null}', 'value'],
    ['{"path":"/a","op":"lt","value":[1]}', 'value'],
    ['{"path":"/a","op":"lte","value":{}}', 'value'],
    ['{"path":"/a","op":"prefix","value":1}', 'value'],
    ['{"path":"/a","op":"prefix","value":null}', 'value'],
  ])('refuses %s at %j', (source, path) => {
    expect(specError(source).path).toBe(path);
  });

  it('refuses an in list of 51 values', () => {
    const values = Array.from({ length: 51 }, (_, index) => String(index));
    expect(specError(`{"all":[${condition('/a', 'in', `[${values.join(',')}]`)}]}`)).toMatchObject({
      path: 'all.0.value',
      message: 'in takes an array of 1 to 50 values, got 51',
    });
  });

  it('explains what was expected', () => {
    expect(specError('{"path":"/a","op":"like","value":1}').message).toBe(
      'op must be one of eq, ne, in, exists, gt, gte, lt, lte, prefix; got "like"',
    );
    expect(specError('{"path":"/a","op":"exists","value":"yes"}').message).toBe(
      'exists takes true or false, got a string',
    );
    expect(specError('{"all":[1]}').message).toMatch(/^expected a condition .* got a number$/);
    expect(specError('not json').message).toMatch(/^the filter is not valid JSON: /);
  });
});
