// Test support for this package (not exported from index.ts): fast-check generators and an exact value check.
import fc from 'fast-check';

/** A JSON text together with the JS value it denotes. */
export interface JsonText {
  text: string;
  value: unknown;
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** Zero to three JSON whitespace characters, often none. */
export const jsonWhitespace: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), minLength: 1, maxLength: 3 }) },
);

/**
 * Any Unicode scalar value (no surrogate halves). Built by hand: fast-check's 'binary' unit spends most of a second
 * building a reverse mapping the first time it is used in each test file.
 */
export const unicodeScalar: fc.Arbitrary<string> = fc
  .integer({ min: 0, max: 0x10ffff - 0x800 })
  .map((index) => String.fromCodePoint(index < 0xd800 ? index : index + 0x800));

/** Characters that stress the string rules: specials, controls, lone surrogates, astral code points. */
const stringCharacter: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('"', '\\', '/', '\b', '\f', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', '\u2028', '\ufeff'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
  unicodeScalar,
);

type UnitSpelling = { style: number; upperHex: boolean };

/** How to spell one UTF-16 code unit: 0 raw when allowed, 1 short escape when one exists, else \uXXXX. */
const unitSpelling = fc.record({ style: fc.nat({ max: 2 }), upperHex: fc.boolean() });

function spellCodeUnit(code: number, { style, upperHex }: UnitSpelling): string {
  const char = String.fromCharCode(code);
  const mayBeRaw = code >= 0x20 && char !== '"' && char !== '\\';
  if (style === 0 && mayBeRaw) return char;
  const short = SHORT_ESCAPES[char];
  if (style <= 1 && short !== undefined) return short;
  const hex = code.toString(16).padStart(4, '0');
  return '\\u' + (upperHex ? hex.toUpperCase() : hex);
}

/** The string literal for `value`, spelling code unit i with spellings[i] (cycling; raw when there are none). */
function spellString(value: string, spellings: readonly UnitSpelling[]): string {
  let text = '"';
  for (let i = 0; i < value.length; i++) {
    text += spellCodeUnit(value.charCodeAt(i), spellings[i % spellings.length] ?? { style: 0, upperHex: false });
  }
  return text + '"';
}

/** A string literal for each generated content, every code unit spelled at random (raw, \n-style, \u00XX). */
export function spelledString(content: fc.Arbitrary<string>): fc.Arbitrary<JsonText> {
  return fc
    .tuple(content, fc.array(unitSpelling, { minLength: 1, maxLength: 8 }))
    .map(([value, spellings]) => ({ text: spellString(value, spellings), value }));
}

export const jsonString: fc.Arbitrary<JsonText> = spelledString(fc.string({ unit: stringCharacter, maxLength: 6 }));

/** Keys that matter to prototypes, pointers (~ and /) and array-like lookups, plus arbitrary ones. */
export const jsonKey: fc.Arbitrary<JsonText> = fc.oneof(
  spelledString(
    fc.constantFrom('__proto__', 'constructor', 'toString', 'a', 'b', '', '~', '/', '~1', 'a/b~0', '0', '1'),
  ),
  jsonString,
);

/** Every JSON number spelling shape: signs, zero, fractions, e/E with optional sign and leading zeros, huge exponents. */
export const jsonNumberSpelling: fc.Arbitrary<string> = fc.oneof(
  fc.stringMatching(/^-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?$/),
  fc.constantFrom('-0', '0.0', '1e400', '-1e400', '1e-400', '5e-324', '1.7976931348623157e308', '1E+0001'),
);

const jsonNumber: fc.Arbitrary<JsonText> = jsonNumberSpelling.map((text) => ({ text, value: Number(text) }));

const jsonLiteral: fc.Arbitrary<JsonText> = fc.constantFrom<JsonText>(
  { text: 'true', value: true },
  { text: 'false', value: false },
  { text: 'null', value: null },
);

const jsonScalar: fc.Arbitrary<JsonText> = fc.oneof(jsonString, jsonNumber, jsonLiteral);

/** Like JSON.parse: "__proto__" becomes an own property, never the prototype. */
function objectFromEntries(entries: Array<[string, unknown]>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  }
  return object;
}

function arrayText(innerWhitespace: string, items: Array<[string, JsonText, string]>): JsonText {
  const text =
    items.length === 0 ? innerWhitespace : items.map(([before, item, after]) => before + item.text + after).join(',');
  return { text: `[${text}]`, value: items.map(([, item]) => item.value) };
}

type MemberParts = [string, JsonText, string, string, JsonText, string];

function objectText(innerWhitespace: string, members: MemberParts[]): JsonText {
  const spelled = members.map(([a, key, b, c, value, d]) => `${a}${key.text}${b}:${c}${value.text}${d}`);
  return {
    text: `{${members.length === 0 ? innerWhitespace : spelled.join(',')}}`,
    value: objectFromEntries(members.map(([, key, , , value]) => [key.value as string, value.value])),
  };
}

const jsonTree = fc.letrec<{ value: JsonText; array: JsonText; object: JsonText }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, jsonScalar, tie('array'), tie('object')),
  array: fc
    .tuple(jsonWhitespace, fc.array(fc.tuple(jsonWhitespace, tie('value'), jsonWhitespace), { maxLength: 4 }))
    .map(([inner, items]) => arrayText(inner, items)),
  object: fc
    .tuple(
      jsonWhitespace,
      fc.uniqueArray(fc.tuple(jsonWhitespace, jsonKey, jsonWhitespace, jsonWhitespace, tie('value'), jsonWhitespace), {
        selector: (member) => member[1].value,
        maxLength: 4,
      }),
    )
    .map(([inner, members]) => objectText(inner, members)),
}));

/** Any JSON value, serialised with random whitespace between tokens, random escapes and number spellings. */
export const jsonText: fc.Arbitrary<JsonText> = fc
  .tuple(jsonWhitespace, jsonTree.value, jsonWhitespace)
  .map(([before, tree, after]) => ({ text: before + tree.text + after, value: tree.value }));

/** Fragments from which mostly-invalid JSON-ish strings are assembled; each is a typical way to get JSON wrong. */
export const jsonishFragments: readonly string[] = [
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  '"a"',
  '"\\u0061"',
  '"b"',
  '0',
  '1',
  '9',
  '-',
  '+',
  '.',
  'e',
  'E',
  '01',
  '1.',
  '.5',
  '-0',
  '1e',
  '1e+',
  'true',
  'false',
  'null',
  'tru',
  'nul',
  'NaN',
  'Infinity',
  "'a'",
  ' ',
  '\t',
  '\n',
  '\r',
  '\u000b',
  '\u000c',
  '\u00a0',
  '\ufeff',
  '\u2028',
  'x',
  'u',
  '/',
  '//',
  '/*',
  '*/',
  '\u0000',
  '\u001f',
  '"\\ud800"',
  '"\\/"',
  '"\\x"',
  '"\\u12"',
  '"\\U0041"',
];

/** A string of JSON-ish fragments: a few are valid JSON, most are not. */
export const jsonishText: fc.Arbitrary<string> = fc
  .array(fc.constantFrom(...jsonishFragments), { maxLength: 12 })
  .map((fragments) => fragments.join(''));

/** The texts with one edit each (insert a fragment, delete a character or replace one): often invalid. */
export function withOneEdit(texts: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(texts, fc.nat(), fc.constantFrom(...jsonishFragments), fc.constantFrom('insert', 'delete', 'replace'))
    .map(([text, seed, fragment, edit]) => {
      const at = seed % (text.length + 1);
      if (edit === 'insert') return text.slice(0, at) + fragment + text.slice(at);
      if (edit === 'delete') return text.slice(0, at) + text.slice(at + 1);
      return text.slice(0, at) + fragment + text.slice(at + 1);
    });
}

/** An object text where one key appears twice, spelled differently; `duplicateOffset` is where the second starts. */
export interface DuplicateKeyText {
  text: string;
  key: string;
  duplicateOffset: number;
}

export const duplicateKeyText: fc.Arbitrary<DuplicateKeyText> = fc
  .tuple(
    fc.uniqueArray(fc.tuple(jsonKey, jsonText), { selector: ([key]) => key.value, minLength: 1, maxLength: 4 }),
    fc.nat(),
    fc.nat(),
    jsonText,
    jsonWhitespace,
    fc.array(unitSpelling, { minLength: 1, maxLength: 8 }),
  )
  .map(([members, duplicatedSeed, insertSeed, value, space, spellings]) => {
    const key = members[duplicatedSeed % members.length]![0].value as string;
    const withDuplicate = [...members];
    withDuplicate.splice(insertSeed % (members.length + 1), 0, [
      { text: spellString(key, spellings), value: key },
      value,
    ]);
    return buildDuplicateKeyText(withDuplicate, key, space);
  });

function buildDuplicateKeyText(members: Array<[JsonText, JsonText]>, key: string, space: string): DuplicateKeyText {
  let text = space + '{';
  const keyOffsets: number[] = [];
  members.forEach(([memberKey, value], index) => {
    if (index > 0) text += ',' + space;
    if (memberKey.value === key) keyOffsets.push(text.length);
    text += `${memberKey.text}${space}:${value.text}`;
  });
  return { text: text + space + '}', key, duplicateOffset: keyOffsets[1]! };
}

/**
 * A description of a JSON-like JS value that tells apart everything a consumer could notice: -0 from 0, own
 * "__proto__" keys from prototypes, null-prototype objects from plain ones, key order. (vitest's toStrictEqual
 * cannot be used: it compares `.constructor`, which is an ordinary own key in JSON objects.)
 */
export function describeExactly(value: unknown): string {
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? `<${typeof value}>`;
  if (Array.isArray(value)) {
    const tag = Object.getPrototypeOf(value) === Array.prototype ? '' : '<exotic array>';
    return `${tag}[${value.map(describeExactly).join(',')}]`;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  const tag = prototype === Object.prototype ? '' : prototype === null ? '<null prototype>' : '<other prototype>';
  const members = Reflect.ownKeys(value).map((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
    const flags = descriptor.enumerable && descriptor.writable && descriptor.configurable ? '' : '<odd property>';
    return `${flags}${JSON.stringify(String(key))}:${describeExactly(descriptor.value)}`;
  });
  return `${tag}{${members.join(',')}}`;
}
