'use client';

import type { ReactNode } from 'react';
import { Textarea } from '@mantine/core';

/** Why `text` is not JSON, or null when it is JSON or blank (blank means none). */
export function jsonProblem(text: string): string | null {
  if (text.trim() === '') return null;
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return `Not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
}

interface JsonEditorProps {
  label: string;
  description?: ReactNode;
  value: string;
  onChange: (value: string) => void;
  /** An error from the API about this field, shown when the text itself parses. */
  serverError?: string | undefined;
  placeholder?: string;
  minRows?: number;
}

/** A monospace JSON editor that checks the text on every keystroke; the text is kept exactly as typed. */
export function JsonEditor({
  label,
  description,
  value,
  onChange,
  serverError,
  placeholder,
  minRows = 5,
}: JsonEditorProps) {
  const problem = jsonProblem(value);
  return (
    <Textarea
      label={label}
      description={description}
      value={value}
      onChange={(event) => onChange(event.currentTarget.value)}
      error={problem ?? serverError}
      placeholder={placeholder}
      autosize
      minRows={minRows}
      maxRows={16}
      spellCheck={false}
      autoCapitalize="off"
      autoComplete="off"
      styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
    />
  );
}
