'use client';

import type { KeyValueRow } from '@/lib/key-value-rows';
import { KeyValueEditor } from './key-value-editor';

interface MetadataEditorProps {
  rows: KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  error?: string | undefined;
}

/** Metadata as key/value rows; text values only, as the API stores them. */
export function MetadataEditor({ rows, onChange, error }: MetadataEditorProps) {
  return (
    <KeyValueEditor
      label="Metadata"
      description="Text values your integration can read back"
      noun="metadata"
      rows={rows}
      onChange={onChange}
      error={error}
    />
  );
}
