import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError } from './errors.js';
import { unicodeScalar } from './json.testing.js';
import { parseStrict } from './parse.js';
import { byteLength, decodeUtf8Strict } from './utf8.js';

function decodeError(bytes: number[]): JsonSyntaxError {
  try {
    decodeUtf8Strict(Uint8Array.from(bytes));
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error;
    throw error;
  }
  throw new Error(`expected ${bytes.join(' ')} to be rejected`);
}

const anyCodeUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) });

describe('decodeUtf8Strict', () => {
  it('decodes 1- to 4-byte sequences', () => {
    const bytes = [0x7b, 0x22, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0x22, 0x7d];
    expect(decodeUtf8Strict(Uint8Array.from(bytes))).toBe('{"é€😀"}');
  });

  it('keeps a byte order mark, which parseStrict then rejects', () => {
    const text = decodeUtf8Strict(Uint8Array.from([0xef, 0xbb, 0xbf, 0x31]));
    expect(text).toBe('\ufeff1');
    expect(() => parseStrict(text)).toThrow(JsonSyntaxError);
  });

  it.each([
    ['a lone continuation byte', [0x31, 0x80], 1],
    ['an impossible byte', [0x31, 0x32, 0xff], 2],
    ['an overlong encoding of "/"', [0xc0, 0xaf], 0],
    ['an overlong 3-byte encoding', [0xe0, 0x80, 0xaf], 1],
    ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80], 1],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 1],
    ['a sequence cut short by ASCII', [0xe2, 0x82, 0x41], 2],
    ['a sequence cut short by the end of input', [0x22, 0xe2, 0x82], 3],
  ])('rejects %s with the offset of the first byte that cannot be valid', (_name, bytes, offset) => {
    expect(decodeError(bytes)).toMatchObject({ reason: 'syntax', offset });
  });

  it('decodes exactly what TextEncoder encoded, for any well-formed text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.string({ minLength: 1, maxLength: 1 }), unicodeScalar) }), (text) => {
        expect(decodeUtf8Strict(new TextEncoder().encode(text))).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('accepts a byte string exactly when a fatal TextDecoder does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (bytes) => {
        let expected: string | null = null;
        try {
          expected = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
        } catch {
          expected = null;
        }
        if (expected === null) {
          expect(() => decodeUtf8Strict(bytes)).toThrow(JsonSyntaxError);
        } else {
          expect(decodeUtf8Strict(bytes)).toBe(expected);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('byteLength', () => {
  it.each([
    ['', 0],
    ['a', 1],
    ['é', 2],
    ['€', 3],
    ['😀', 4],
    ['\ud800', 3],
    ['\udc00\ud800', 6],
  ])('counts %j as %i bytes', (text, bytes) => {
    expect(byteLength(text)).toBe(bytes);
  });

  it('agrees with TextEncoder for any sequence of UTF-16 code units, lone surrogates included', () => {
    fc.assert(
      fc.property(anyCodeUnits, (text) => {
        expect(byteLength(text)).toBe(new TextEncoder().encode(text).length);
      }),
      { numRuns: 1000 },
    );
  });
});
