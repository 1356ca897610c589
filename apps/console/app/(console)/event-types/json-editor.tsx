'use client';

import { Textarea } from '@mantine/core';

/** Why `text` is not JSON, or null when it is JSON or blank (blank means no example). */
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
  description?: string;
  value: string;
  onChange: (value: string) => void;
  /** An error from the API about this field, shown when the text itself parses. */
  serverError?: string | undefined;
}

/** A monospace JSON editor that checks the text on every keystroke; the text is kept exactly as typed. */
export function JsonEditor({ label, description, value, onChange, serverError }: JsonEditorProps) {
  const problem = jsonProblem(value);
  return (
    <Textarea
      label={label}
      description={description}
      value={value}
      onChange={(event) => onChange(event.currentTarget.value)}
      error={problem ?? serverError}
      autosize
      minRows={5}
      maxRows={16}
      spellCheck={false}
      autoCapitalize="off"
      autoComplete="off"
      styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
      data-testid="example-editor"
    />
  );
}
