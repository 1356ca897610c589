import { describe, expect, it } from 'vitest';
import { describeExactly } from './json.testing.js';
import { parseStrict } from './parse.js';
import { toValue } from './value.js';

describe('toValue', () => {
  it('builds the value JSON.parse builds, with numbers through Number(raw)', () => {
    const source =
      '{"n":[0,-0,1.50,1e400,-1e400,1e-400,0.1000000000000000055511151231257827],"s":"\\u00e9","t":true,"z":null}';
    expect(describeExactly(toValue(parseStrict(source)))).toBe(describeExactly(JSON.parse(source)));
  });

  it('keeps "__proto__" as an own key and never touches a prototype', () => {
    const value = toValue(parseStrict('{"__proto__":{"polluted":true},"nested":[{"__proto__":null}]}')) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'nested']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ polluted: true });
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor((value.nested as object[])[0]!, '__proto__')?.value).toBeNull();
  });

  it('treats "constructor" and "toString" as ordinary keys', () => {
    const value = toValue(parseStrict('{"constructor":1,"toString":"x","hasOwnProperty":[]}'));
    expect(describeExactly(value)).toBe('{"constructor":1,"toString":"x","hasOwnProperty":[]}');
  });

  it('converts 100,000 levels of nesting without recursion', () => {
    const depth = 100_000;
    const node = parseStrict('['.repeat(depth) + '7' + ']'.repeat(depth), { maxDepth: Infinity });
    let value = toValue(node);
    for (let level = 0; level < depth; level++) value = (value as unknown[])[0];
    expect(value).toBe(7);
  });
});
