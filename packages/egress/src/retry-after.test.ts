import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.js';

const NOW = Date.parse('2030-06-01T12:00:00Z');

describe('parseRetryAfter', () => {
  it.each<[string | string[] | undefined, number | null]>([
    ['120', 120],
    ['0', 0],
    [' 30 ', 30],
    [['15', '900'], 15],
    ['Sat, 01 Jun 2030 12:01:30 GMT', 90],
    ['Sat, 01 Jun 2030 12:00:00 GMT', 0],
    ['Sat, 01 Jun 2030 11:00:00 GMT', 0],
    ['Saturday, 01-Jun-30 12:00:10 GMT', 10],
    ['Sat Jun  1 12:00:20 2030', 20],
    [undefined, null],
    ['', null],
    ['-5', null],
    ['1.5', null],
    ['soon', null],
    ['2030-06-01T12:01:00Z', null],
    ['2031', 2031],
    ['99999999999999999999', null],
  ])('%j -> %j', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
});
