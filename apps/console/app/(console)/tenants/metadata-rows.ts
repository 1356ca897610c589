export interface MetadataRow {
  id: number;
  key: string;
  value: string;
}

let nextRowId = 1;

export function newRow(key = '', value = ''): MetadataRow {
  return { id: nextRowId++, key, value };
}

export function toRows(metadata: Record<string, string>): MetadataRow[] {
  return Object.entries(metadata).map(([key, value]) => newRow(key, value));
}

/** Rows become the metadata object; blank rows are ignored, a value without a key or a repeated key is refused. */
export function toMetadata(
  rows: readonly MetadataRow[],
): { ok: true; metadata: Record<string, string> } | { ok: false; message: string } {
  const metadata: Record<string, string> = {};
  for (const row of rows) {
    if (row.key === '' && row.value === '') continue;
    if (row.key === '') return { ok: false, message: `The value "${row.value}" needs a key.` };
    if (Object.hasOwn(metadata, row.key)) return { ok: false, message: `The key "${row.key}" is used twice.` };
    metadata[row.key] = row.value;
  }
  return { ok: true, metadata };
}
