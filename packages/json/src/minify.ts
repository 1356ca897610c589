import type { JsonNode } from './node.js';
import { parseStrict } from './parse.js';

// Local on purpose: this loop runs per character, and some loaders (vitest, tsx in CommonJS mode) turn every
// imported binding into a getter call.
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isWhitespace(code: number): boolean {
  return code === SPACE || code === LF || code === CR || code === TAB;
}

/**
 * The exact source text with whitespace outside strings removed; key order, escapes and number spellings are kept.
 * Without `node` the source is parsed strictly first (so invalid JSON throws); pass the node from an earlier
 * parseStrict of the same source to skip that.
 */
export function minify(source: string, node: JsonNode = parseStrict(source)): string {
  return rawText(source, node);
}

/** Minified source text of one node's span, e.g. a value found by resolvePointer, with its exact bytes. */
export function rawText(source: string, node: JsonNode): string {
  if (node.kind !== 'object' && node.kind !== 'array') return source.slice(node.start, node.end);
  return removeWhitespaceOutsideStrings(source, node.start, node.end);
}

/** Assumes [start, end) is valid JSON, so every quote outside a string opens one and every string is closed. */
function removeWhitespaceOutsideStrings(source: string, start: number, end: number): string {
  let minified = '';
  let chunkStart = start;
  let pos = start;
  while (pos < end) {
    const code = source.charCodeAt(pos);
    if (code === QUOTE) {
      pos = endOfString(source, pos);
    } else if (isWhitespace(code)) {
      minified += source.slice(chunkStart, pos);
      pos++;
      while (pos < end && isWhitespace(source.charCodeAt(pos))) pos++;
      chunkStart = pos;
    } else {
      pos++;
    }
  }
  return minified + source.slice(chunkStart, end);
}

/** Index just past the closing quote of the string literal opening at `openQuote`. */
function endOfString(source: string, openQuote: number): number {
  let pos = openQuote + 1;
  // The length bound only matters for a node that does not belong to `source`: stop instead of spinning.
  while (pos < source.length) {
    const code = source.charCodeAt(pos);
    if (code === QUOTE) return pos + 1;
    pos += code === BACKSLASH ? 2 : 1;
  }
  return source.length;
}
