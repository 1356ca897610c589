import { RawJson } from '@svc/core';

/**
 * JSON.stringify that splices RawJson values in as the exact text they hold, so examples and payloads are
 * returned exactly as written.
 */
export function renderJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : renderJson(item))).join(',')}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (typeof value === 'object') {
    const parts: string[] = [];
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      parts.push(`${JSON.stringify(key)}:${renderJson(item)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The plain JSON value a rendered body denotes (used to check responses against their schemas). */
export function plainValue(value: unknown): unknown {
  return JSON.parse(renderJson(value));
}
