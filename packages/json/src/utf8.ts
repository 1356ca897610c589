import { JsonSyntaxError } from './errors.js';

// ignoreBOM keeps a leading BOM in the text, so parseStrict rejects it instead of it vanishing silently.
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 exactly; invalid UTF-8 is a JsonSyntaxError whose offset is the first byte that cannot be valid. */
export function decodeUtf8Strict(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    const offset = firstInvalidByteOffset(bytes);
    throw new JsonSyntaxError('syntax', offset, 'Invalid UTF-8');
  }
}

/**
 * Being a prefix of some valid UTF-8 text is monotone in the prefix length, and a streaming decoder tells exactly
 * that, so a binary search finds the first byte that breaks it. Runs only on the error path.
 */
function firstInvalidByteOffset(bytes: Uint8Array): number {
  let validPrefix = 0;
  let invalidPrefix = bytes.length + 1;
  while (invalidPrefix - validPrefix > 1) {
    const middle = (validPrefix + invalidPrefix) >>> 1;
    if (isPrefixOfValidUtf8(bytes.subarray(0, middle))) validPrefix = middle;
    else invalidPrefix = middle;
  }
  return validPrefix;
}

function isPrefixOfValidUtf8(prefix: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(prefix, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** Number of bytes `text` takes in UTF-8; a lone surrogate counts as U+FFFD (3 bytes), as TextEncoder writes it. */
export function byteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (isSurrogatePair(code, text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function isSurrogatePair(high: number, low: number): boolean {
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}
