import { minify, parseStrict } from '@svc/json';

/** A JSON value kept as the exact text the caller wrote (validated, never re-serialised). */
export class RawJson {
  constructor(readonly text: string) {}

  static parse(text: string): RawJson {
    parseStrict(text);
    return new RawJson(text);
  }

  /** Whitespace-insensitive identity of the value, for comparing requests. */
  get minified(): string {
    return minify(this.text);
  }

  get byteLength(): number {
    return Buffer.byteLength(this.text, 'utf8');
  }
}

/** Maps RawJson leaves to a comparable plain value (used to fingerprint requests for idempotency). */
export function comparableValue(value: unknown): unknown {
  if (value instanceof RawJson) return { $raw: value.minified };
  if (Array.isArray(value)) return value.map(comparableValue);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = comparableValue(item);
    return out;
  }
  return value;
}
