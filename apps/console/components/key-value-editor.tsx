'use client';

import { Button, CloseButton, Group, Input, PasswordInput, Stack, TextInput } from '@mantine/core';
import { newRow, type KeyValueRow } from '@/lib/key-value-rows';

interface KeyValueEditorProps {
  label: string;
  description?: string;
  /** Names the rows in accessible labels and the add button: "Metadata key 1", "Add metadata". */
  noun: string;
  rows: KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  /** Write-only values (custom headers) are typed into password fields. */
  maskValues?: boolean;
  error?: string | undefined;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A text map as key/value rows, as the API stores metadata and custom headers. */
export function KeyValueEditor({ label, description, noun, rows, onChange, maskValues, error }: KeyValueEditorProps) {
  const update = (id: number, change: Partial<KeyValueRow>) =>
    onChange(rows.map((row) => (row.id === id ? { ...row, ...change } : row)));
  const ValueInput = maskValues ? PasswordInput : TextInput;
  return (
    <Input.Wrapper label={label} description={description} error={error}>
      <Stack gap="xs" mt={6}>
        {rows.map((row, index) => (
          <Group key={row.id} gap="xs" wrap="nowrap">
            <TextInput
              aria-label={`${capitalized(noun)} key ${index + 1}`}
              placeholder="key"
              value={row.key}
              onChange={(event) => update(row.id, { key: event.currentTarget.value })}
              flex={1}
            />
            <ValueInput
              aria-label={`${capitalized(noun)} value ${index + 1}`}
              placeholder="value"
              value={row.value}
              onChange={(event) => update(row.id, { value: event.currentTarget.value })}
              autoComplete="off"
              flex={2}
            />
            <CloseButton
              aria-label={`Remove ${noun} row ${index + 1}`}
              onClick={() => onChange(rows.filter((r) => r.id !== row.id))}
            />
          </Group>
        ))}
        <Button variant="subtle" size="compact-sm" w="fit-content" onClick={() => onChange([...rows, newRow()])}>
          {`Add ${noun}`}
        </Button>
      </Stack>
    </Input.Wrapper>
  );
}
