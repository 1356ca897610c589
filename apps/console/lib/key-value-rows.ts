/** One editable row of a text map (metadata, custom headers). */
export interface KeyValueRow {
  id: number;
  key: string;
  value: string;
}

let nextRowId = 1;

export function newRow(key = '', value = ''): KeyValueRow {
  return { id: nextRowId++, key, value };
}

/** A map value as text: metadata values are strings; anything else (JSON the API never sends) shows as JSON. */
export function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function toRows(record: Record<string, unknown>): KeyValueRow[] {
  return Object.entries(record).map(([key, value]) => newRow(key, valueText(value)));
}

/**
 * Rows become a text map; blank rows are ignored, a value without a key or a repeated key is refused. Messages
 * never repeat a value: header values are write-only.
 */
export function toRecord(
  rows: readonly KeyValueRow[],
): { ok: true; record: Record<string, string> } | { ok: false; message: string } {
  const record: Record<string, string> = {};
  for (const [index, row] of rows.entries()) {
    if (row.key === '' && row.value === '') continue;
    if (row.key === '') return { ok: false, message: `Row ${index + 1} has a value but no key.` };
    if (Object.hasOwn(record, row.key)) return { ok: false, message: `The key "${row.key}" is used twice.` };
    record[row.key] = row.value;
  }
  return { ok: true, record };
}
