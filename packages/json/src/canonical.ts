/**
 * Deterministic JSON for a plain JS value: JSON.stringify's rules (toJSON, boxed primitives, undefined and
 * functions dropped from objects and nulled in arrays, non-finite numbers as null) with object keys sorted by
 * UTF-16 code units at every level, so two requests with the same content give the same text whatever their key
 * order. Throws TypeError for cycles, bigints and values with no JSON form (undefined, functions, symbols).
 */
export function canonicalStringify(value: unknown): string {
  const text = new CanonicalWriter().write(value, '');
  if (text === undefined) throw new TypeError(`${typeof value} has no JSON representation`);
  return text;
}

class CanonicalWriter {
  private readonly ancestors = new Set<object>();

  /** undefined means "no JSON form": the member is dropped, or the array item becomes null. */
  write(input: unknown, key: string): string | undefined {
    const value = unboxPrimitive(applyToJson(input, key));
    switch (typeof value) {
      case 'string':
        return JSON.stringify(value);
      case 'number':
        return Number.isFinite(value) ? JSON.stringify(value) : 'null';
      case 'boolean':
        return value ? 'true' : 'false';
      case 'bigint':
        throw new TypeError('BigInt value cannot be serialized in JSON');
      case 'object':
        if (value === null) return 'null';
        return this.writeContainer(value);
      default:
        return undefined;
    }
  }

  private writeContainer(value: object): string {
    if (this.ancestors.has(value)) throw new TypeError('Converting circular structure to JSON');
    this.ancestors.add(value);
    const text = Array.isArray(value) ? this.writeArray(value) : this.writeObject(value as Record<string, unknown>);
    this.ancestors.delete(value);
    return text;
  }

  private writeArray(items: readonly unknown[]): string {
    const parts: string[] = [];
    for (let index = 0; index < items.length; index++) parts.push(this.write(items[index], String(index)) ?? 'null');
    return `[${parts.join(',')}]`;
  }

  private writeObject(object: Record<string, unknown>): string {
    const parts: string[] = [];
    for (const key of Object.keys(object).sort()) {
      const member = this.write(object[key], key);
      if (member !== undefined) parts.push(`${JSON.stringify(key)}:${member}`);
    }
    return `{${parts.join(',')}}`;
  }
}

function applyToJson(value: unknown, key: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return (toJSON as (key: string) => unknown).call(value, key);
  }
  return value;
}

function unboxPrimitive(value: unknown): unknown {
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  return value;
}
