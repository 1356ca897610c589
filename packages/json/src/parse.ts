import { JsonSyntaxError } from './errors.js';
import type { JsonArrayNode, JsonContainerNode, JsonNode, JsonObjectNode } from './node.js';

export interface ParseOptions {
  /** Deepest allowed nesting of objects and arrays; 512 unless given. */
  maxDepth?: number;
}

export const DEFAULT_MAX_DEPTH = 512;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const SLASH = 0x2f;
const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_B = 0x62;
const LOWER_E = 0x65;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_R = 0x72;
const LOWER_T = 0x74;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

// Most objects are small: scanning their few keys is cheaper than allocating a Set for each of them.
const SMALL_OBJECT_MEMBERS = 8;

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  [QUOTE]: '"',
  [BACKSLASH]: '\\',
  [SLASH]: '/',
  [LOWER_B]: '\b',
  [LOWER_F]: '\f',
  [LOWER_N]: '\n',
  [LOWER_R]: '\r',
  [LOWER_T]: '\t',
};

/**
 * Parses RFC 8259 JSON text strictly, keeping source spans. Rejects duplicate keys (compared after decoding
 * escapes) and nesting deeper than `maxDepth`. Never recurses, so hostile nesting cannot overflow the stack.
 */
export function parseStrict(source: string, options: ParseOptions = {}): JsonNode {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!(maxDepth === Infinity || (Number.isInteger(maxDepth) && maxDepth >= 0))) {
    throw new RangeError(`maxDepth must be a non-negative integer or Infinity, got ${maxDepth}`);
  }
  return new StrictParser(source, maxDepth).parseDocument();
}

function isJsonWhitespace(code: number): boolean {
  return code === SPACE || code === LF || code === CR || code === TAB;
}

function isDigit(code: number): boolean {
  return code >= DIGIT_0 && code <= DIGIT_9;
}

function skipDigits(source: string, pos: number): number {
  while (isDigit(source.charCodeAt(pos))) pos++;
  return pos;
}

function hexValue(code: number): number {
  if (code >= DIGIT_0 && code <= DIGIT_9) return code - DIGIT_0;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= LOWER_F) return lower - 0x61 + 10;
  return -1;
}

function describeOffendingInput(source: string, offset: number): string {
  if (offset >= source.length) return 'Unexpected end of JSON input';
  return `Unexpected character ${JSON.stringify(source[offset])}`;
}

class StrictParser {
  private pos = 0;
  private readonly open: JsonContainerNode[] = [];
  /** Decoded keys of open objects that grew past SMALL_OBJECT_MEMBERS. */
  private readonly bigObjectKeys = new Map<JsonObjectNode, Set<string>>();

  constructor(
    private readonly source: string,
    private readonly maxDepth: number,
  ) {}

  parseDocument(): JsonNode {
    const root = this.readValue();
    while (this.open.length > 0) this.continueInnermostContainer();
    this.skipWhitespace();
    if (this.pos !== this.source.length) this.failSyntax(this.pos);
    return root;
  }

  /** Reads a scalar completely, or opens a container whose contents the main loop reads later. */
  private readValue(): JsonNode {
    this.skipWhitespace();
    const code = this.source.charCodeAt(this.pos);
    switch (code) {
      case OPEN_BRACE:
        return this.openContainer({ kind: 'object', start: this.pos, end: -1, members: [] });
      case OPEN_BRACKET:
        return this.openContainer({ kind: 'array', start: this.pos, end: -1, items: [] });
      case QUOTE: {
        const start = this.pos;
        const value = this.readString();
        return { kind: 'string', start, end: this.pos, value };
      }
      case LOWER_T:
        return this.readLiteral('true');
      case LOWER_F:
        return this.readLiteral('false');
      case LOWER_N:
        return this.readLiteral('null');
      default:
        if (code === MINUS || isDigit(code)) return this.readNumber();
        return this.failSyntax(this.pos);
    }
  }

  private openContainer<T extends JsonContainerNode>(node: T): T {
    if (this.open.length >= this.maxDepth) {
      throw new JsonSyntaxError('too_deep', this.pos, `Nesting deeper than ${this.maxDepth}`);
    }
    this.open.push(node);
    this.pos++;
    return node;
  }

  /** One step inside the innermost open container: either its closing bracket, or one (separated) element. */
  private continueInnermostContainer(): void {
    const node = this.open[this.open.length - 1]!;
    this.skipWhitespace();
    const code = this.source.charCodeAt(this.pos);
    if (code === (node.kind === 'object' ? CLOSE_BRACE : CLOSE_BRACKET)) {
      this.pos++;
      node.end = this.pos;
      this.open.pop();
      if (node.kind === 'object' && node.members.length >= SMALL_OBJECT_MEMBERS) this.bigObjectKeys.delete(node);
      return;
    }
    const elementCount = node.kind === 'object' ? node.members.length : node.items.length;
    if (elementCount > 0) {
      if (code !== COMMA) this.failSyntax(this.pos);
      this.pos++;
    }
    if (node.kind === 'object') this.readMember(node);
    else this.readItem(node);
  }

  private readItem(node: JsonArrayNode): void {
    node.items.push(this.readValue());
  }

  private readMember(node: JsonObjectNode): void {
    this.skipWhitespace();
    const keyStart = this.pos;
    if (this.source.charCodeAt(keyStart) !== QUOTE) this.failSyntax(keyStart);
    const key = this.readString();
    const keyEnd = this.pos;
    if (this.hasKey(node, key)) {
      throw new JsonSyntaxError('duplicate_key', keyStart, `Duplicate key ${JSON.stringify(key)}`);
    }
    this.skipWhitespace();
    if (this.source.charCodeAt(this.pos) !== COLON) this.failSyntax(this.pos);
    this.pos++;
    node.members.push({ key, keyStart, keyEnd, value: this.readValue() });
  }

  /** Whether `node` already has `key`; big objects keep a Set of their keys so the check stays constant time. */
  private hasKey(node: JsonObjectNode, key: string): boolean {
    const { members } = node;
    if (members.length < SMALL_OBJECT_MEMBERS) {
      for (let i = 0; i < members.length; i++) if (members[i]!.key === key) return true;
      return false;
    }
    let keys = this.bigObjectKeys.get(node);
    if (keys === undefined) {
      keys = new Set(members.map((member) => member.key));
      this.bigObjectKeys.set(node, keys);
    }
    if (keys.has(key)) return true;
    keys.add(key);
    return false;
  }

  /** Reads the string literal at `pos` (on its opening quote) and returns its decoded value. */
  private readString(): string {
    const { source } = this;
    const length = source.length;
    const contentStart = this.pos + 1;
    let pos = contentStart;
    while (pos < length) {
      const code = source.charCodeAt(pos);
      if (code === QUOTE) {
        this.pos = pos + 1;
        return source.slice(contentStart, pos);
      }
      if (code === BACKSLASH) return this.readEscapedString(contentStart, pos);
      if (code < SPACE) this.failSyntax(pos);
      pos++;
    }
    return this.failSyntax(length);
  }

  /** Slow path once the first backslash is found at `firstEscape`: decodes chunk by chunk. */
  private readEscapedString(contentStart: number, firstEscape: number): string {
    const { source } = this;
    const length = source.length;
    let decoded = source.slice(contentStart, firstEscape);
    let pos = firstEscape;
    let chunkStart = pos;
    while (pos < length) {
      const code = source.charCodeAt(pos);
      if (code === QUOTE) {
        this.pos = pos + 1;
        return decoded + source.slice(chunkStart, pos);
      }
      if (code === BACKSLASH) {
        if (pos > chunkStart) decoded += source.slice(chunkStart, pos);
        decoded += this.decodeEscape(pos);
        pos = this.pos;
        chunkStart = pos;
        continue;
      }
      if (code < SPACE) this.failSyntax(pos);
      pos++;
    }
    return this.failSyntax(length);
  }

  /**
   * Decodes the escape whose backslash is at `backslash` and moves `pos` past it.
   * Lone surrogate escapes are kept: RFC 8259 allows them.
   */
  private decodeEscape(backslash: number): string {
    const code = this.source.charCodeAt(backslash + 1);
    if (code === LOWER_U) {
      let unit = 0;
      for (let i = backslash + 2; i < backslash + 6; i++) {
        const digit = hexValue(this.source.charCodeAt(i));
        if (digit < 0) this.failSyntax(i);
        unit = unit * 16 + digit;
      }
      this.pos = backslash + 6;
      return String.fromCharCode(unit);
    }
    const decoded = SHORT_ESCAPES[code];
    if (decoded === undefined) this.failSyntax(backslash + 1);
    this.pos = backslash + 2;
    return decoded;
  }

  /** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? ; what follows is checked by the caller. */
  private readNumber(): JsonNode {
    const { source } = this;
    const start = this.pos;
    let pos = start;
    if (source.charCodeAt(pos) === MINUS) pos++;
    const first = source.charCodeAt(pos);
    if (first === DIGIT_0) pos++;
    else if (first >= DIGIT_1 && first <= DIGIT_9) pos = skipDigits(source, pos + 1);
    else this.failSyntax(pos);
    if (source.charCodeAt(pos) === DOT) pos = this.requireDigits(pos + 1);
    const exponentMark = source.charCodeAt(pos);
    if (exponentMark === LOWER_E || exponentMark === UPPER_E) {
      pos++;
      const sign = source.charCodeAt(pos);
      if (sign === PLUS || sign === MINUS) pos++;
      pos = this.requireDigits(pos);
    }
    this.pos = pos;
    return { kind: 'number', start, end: pos, raw: source.slice(start, pos) };
  }

  /** Index past the run of at least one digit starting at `pos`. */
  private requireDigits(pos: number): number {
    if (!isDigit(this.source.charCodeAt(pos))) this.failSyntax(pos);
    return skipDigits(this.source, pos + 1);
  }

  private readLiteral(literal: 'true' | 'false' | 'null'): JsonNode {
    const start = this.pos;
    for (let i = 0; i < literal.length; i++) {
      if (this.source.charCodeAt(start + i) !== literal.charCodeAt(i)) this.failSyntax(start + i);
    }
    this.pos = start + literal.length;
    return { kind: literal, start, end: this.pos };
  }

  private skipWhitespace(): void {
    const { source } = this;
    let pos = this.pos;
    while (isJsonWhitespace(source.charCodeAt(pos))) pos++;
    this.pos = pos;
  }

  private failSyntax(offset: number): never {
    const clamped = Math.min(offset, this.source.length);
    throw new JsonSyntaxError('syntax', clamped, describeOffendingInput(this.source, clamped));
  }
}
